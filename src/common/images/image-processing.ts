import type { Metadata } from 'sharp';
import { loadSharp } from './sharp-loader';

/**
 * Most pixels an image may have (width × height), at upload and wherever Herald decodes one.
 * LinkedIn's Images API takes images "under 36,152,320 pixels", the smallest limit among the
 * platforms Herald posts to, so an accepted image can go everywhere. It is also the guard
 * against decompression bombs: a few kilobytes of PNG or GIF can declare 50,000 × 50,000
 * pixels, 10 GB once decoded. The size comes from the header, without decoding.
 */
export const MAX_IMAGE_PIXELS = 36_152_320 - 1;

/** The raster formats Herald decodes: those every platform it posts to takes. */
export const RASTER_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const;
export type RasterType = (typeof RASTER_TYPES)[number];

/**
 * The raster type the bytes are, from their magic numbers; null for anything else. SVG (a
 * program for librsvg: XML, external references, unbounded rendering), TIFF, HEIF and the other
 * formats libvips could open are never handed to it: only these four are decoded.
 */
export function rasterTypeOf(bytes: Uint8Array): RasterType | null {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 6 && (b.toString('latin1', 0, 6) === 'GIF87a' || b.toString('latin1', 0, 6) === 'GIF89a')) return 'image/gif';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return null;
}

/**
 * The header of an image Herald may decode (no pixel is decoded here): throws ImageFitError when
 * the bytes are not one of RASTER_TYPES (whatever `declaredType` says) or declare more than
 * MAX_IMAGE_PIXELS pixels, so a bomb is measured, and refused, before any pixel is decoded.
 */
async function rasterHeader(bytes: Buffer, declaredType: string): Promise<Metadata> {
  if (rasterTypeOf(bytes) === null) {
    throw new ImageFitError(
      `the image is ${declaredType || 'of no declared type'}, not PNG, JPEG, WebP or GIF (read from its bytes): other formats, SVG among them, are not decoded`,
    );
  }
  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw new ImageFitError(`the image cannot be decoded (${(err as Error).message})`);
  }
  const pixels = (meta.width ?? 0) * (meta.height ?? 0);
  if (pixels > MAX_IMAGE_PIXELS) {
    throw new ImageFitError(
      `the image is ${meta.width} × ${meta.height} pixels (${pixels.toLocaleString('en-US')}); the limit is ${MAX_IMAGE_PIXELS.toLocaleString('en-US')} pixels`,
    );
  }
  return meta;
}

/** An image as it leaves fitUnder: the bytes, their type and pixel size. */
export interface FittedImage {
  bytes: Buffer;
  mimeType: string;
  width: number;
  height: number;
}

/** Thrown when an image cannot be brought under the limit (or cannot be decoded at all). */
export class ImageFitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageFitError';
  }
}

/** Decoded pixels (first frame, EXIF orientation applied): what every encoding step starts from. */
export interface RawImage {
  data: Buffer;
  width: number;
  height: number;
  channels: 1 | 2 | 3 | 4;
}

export interface EncodedImage {
  data: Buffer;
  width: number;
  height: number;
}

/** Decoding and encoding, apart so a test can count them; sharp (libvips) in production. */
export interface ImageCodec {
  /** Decodes the first frame once, oriented, shrunk (on load where the format allows) to fit `longest`. */
  decode(bytes: Buffer, longest: number, keepAlpha: boolean): Promise<RawImage>;
  /** Encodes decoded pixels, downscaled to fit `longest`; never reads the source again. */
  encode(raw: RawImage, longest: number, format: 'jpeg' | 'webp', quality: number): Promise<EncodedImage>;
}

export const sharpCodec: ImageCodec = {
  async decode(bytes, longest, keepAlpha) {
    const sharp = await loadSharp();
    let pipeline = sharp(bytes, { limitInputPixels: MAX_IMAGE_PIXELS, pages: 1 })
      .rotate() // apply EXIF orientation; metadata is not carried over
      .resize({ width: longest, height: longest, fit: 'inside', withoutEnlargement: true });
    pipeline = keepAlpha ? pipeline.ensureAlpha() : pipeline.removeAlpha();
    const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height, channels: info.channels };
  },
  async encode(raw, longest, format, quality) {
    const sharp = await loadSharp();
    const pipeline = sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: raw.channels } }).resize({
      width: longest,
      height: longest,
      fit: 'inside',
      withoutEnlargement: true,
    });
    const encoded =
      format === 'webp' ? pipeline.webp({ quality, alphaQuality: quality, effort: 4 }) : pipeline.jpeg({ quality, mozjpeg: true });
    const { data, info } = await encoded.toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height };
  },
};

/**
 * Quality steps tried at each size. Measured on 12-megapixel photos: quality 82 at full size
 * usually lands a phone photo at 1.5–3 MB.
 */
const QUALITIES = [82, 70, 55] as const;
/** Each size step shrinks the longest side by at least this factor … */
const SHRINK = 0.75;
/** … or more when the last encoding says so: bytes grow about with the pixel count. */
const ESTIMATE_MARGIN = 0.9;
/**
 * The first try starts at no more pixels than 8 per byte of the limit (1 bit per pixel: photos
 * at quality 82 take 1.5–4): bigger would not fit anyway, and this bounds the decoded pixels
 * kept in memory (8 M pixels, 24–32 MB, for Bluesky's 1,000,000 bytes) whatever the source.
 */
const START_PIXELS_PER_BYTE = 8;
/** Below this longest side, an image is no longer worth posting: give up instead. */
const MIN_LONGEST_SIDE = 64;

/** The longest side that keeps the aspect ratio of `width × height` within `pixels` pixels. */
export function longestSideFor(width: number, height: number, pixels: number): number {
  const longest = Math.max(width, height);
  if (width * height <= pixels) return longest;
  return Math.max(1, Math.floor(longest * Math.sqrt(pixels / (width * height))));
}

/** The next, smaller longest side after an encoding of `size` bytes missed `maxBytes`. */
export function nextLongestSide(longest: number, size: number, maxBytes: number): number {
  const estimate = Math.sqrt(maxBytes / size) * ESTIMATE_MARGIN;
  return Math.floor(longest * Math.min(SHRINK, estimate));
}

/**
 * Returns the image unchanged when it already fits in `maxBytes`, else a re-encoded copy that
 * does: metadata (EXIF, including GPS) is dropped, the orientation is applied to the pixels,
 * PNG/WebP/GIF become JPEG unless they have transparency (then WebP keeps the alpha channel),
 * and the image is downscaled until it fits. Animated GIFs lose their animation (the first
 * frame is kept): platforms that take blobs under a byte limit show stills anyway.
 *
 * The source is decoded once, into pixels at most 8 per byte of the limit; every quality and
 * size step encodes from those pixels (decoding a 36-megapixel JPEG costs more than encoding
 * the result, and the old loop decoded it again for each of up to a dozen steps). Each size
 * step is estimated from the last encoding's size, so most images fit at the first or second.
 *
 * Used by connectors with per-image byte limits (Bluesky: 1,000,000 bytes per blob), for
 * uploads and for link-card thumbnails fetched from pages. Throws ImageFitError when the bytes
 * are not a PNG, JPEG, WebP or GIF (an SVG is not passed on either, however small), have more
 * than MAX_IMAGE_PIXELS pixels, or cannot fit.
 */
export async function fitUnder(bytes: Buffer, mimeType: string, maxBytes: number, codec: ImageCodec = sharpCodec): Promise<FittedImage> {
  const meta = await rasterHeader(bytes, mimeType);
  const oriented = (meta.orientation ?? 1) >= 5; // EXIF orientations 5–8 swap width and height
  const width = (oriented ? meta.height : meta.width) ?? 0;
  const height = (oriented ? meta.width : meta.height) ?? 0;
  if (bytes.length <= maxBytes) return { bytes, mimeType, width, height };

  const keepAlpha = meta.hasAlpha === true;
  const format = keepAlpha ? 'webp' : 'jpeg';
  let longest = longestSideFor(width, height, maxBytes * START_PIXELS_PER_BYTE);
  let raw: RawImage;
  try {
    raw = await codec.decode(bytes, longest, keepAlpha);
  } catch (err) {
    throw new ImageFitError(`the image cannot be decoded (${(err as Error).message})`);
  }
  longest = Math.max(raw.width, raw.height);
  for (;;) {
    let smallest = Infinity;
    for (const quality of QUALITIES) {
      const out = await codec.encode(raw, longest, format, quality);
      if (out.data.length <= maxBytes) {
        return { bytes: out.data, mimeType: `image/${format}`, width: out.width, height: out.height };
      }
      smallest = Math.min(smallest, out.data.length);
    }
    const next = nextLongestSide(longest, smallest, maxBytes);
    if (next < MIN_LONGEST_SIDE) {
      throw new ImageFitError(
        `the image cannot be made smaller than ${maxBytes} bytes without shrinking it below ${MIN_LONGEST_SIDE} pixels`,
      );
    }
    longest = next;
  }
}

/**
 * A JPEG of at most `longest` pixels a side, for a page to show inline (the composer's link card):
 * the same checks as fitUnder before anything is decoded, then one decode, shrunk on load where
 * the format allows, and one encode.
 */
export async function previewJpeg(
  bytes: Buffer,
  declaredType: string,
  longest: number,
  codec: ImageCodec = sharpCodec,
): Promise<EncodedImage> {
  await rasterHeader(bytes, declaredType);
  let raw: RawImage;
  try {
    raw = await codec.decode(bytes, longest, false);
  } catch (err) {
    throw new ImageFitError(`the image cannot be decoded (${(err as Error).message})`);
  }
  return codec.encode(raw, longest, 'jpeg', 75);
}

/**
 * Frames of an animated GIF or WebP (1 for a still), read by walking the frame headers without
 * decoding them; null when the file cannot be read that far.
 */
export async function countFrames(bytes: Buffer): Promise<number | null> {
  const sharp = await loadSharp();
  try {
    return (await sharp(bytes, { limitInputPixels: false }).metadata()).pages ?? 1;
  } catch {
    return null;
  }
}
