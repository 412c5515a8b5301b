import sharp from 'sharp';

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

/**
 * Quality steps tried at each size, then the longest side shrinks by this factor. Measured on
 * 12-megapixel photos: quality 82 at full size usually lands a phone photo at 1.5–3 MB, so the
 * loop nearly always ends after one or two downscales, well under a second.
 */
const QUALITIES = [82, 70, 55] as const;
const SHRINK = 0.75;
/** Below this longest side, an image is no longer worth posting: give up instead. */
const MIN_LONGEST_SIDE = 64;
/** Decompression-bomb guard (sharp's default is 268 megapixels). */
const MAX_INPUT_PIXELS = 100_000_000;

/**
 * Returns the image unchanged when it already fits in `maxBytes`, else a re-encoded copy that
 * does: metadata (EXIF, including GPS) is dropped, the orientation is applied to the pixels,
 * PNG/WebP/GIF become JPEG unless they have transparency (then WebP keeps the alpha channel),
 * and the image is downscaled step by step until it fits. Animated GIFs lose their animation
 * (the first frame is kept): platforms that take blobs under a byte limit show stills anyway.
 *
 * Used by connectors with per-image byte limits (Bluesky: 1,000,000 bytes per blob).
 * Throws ImageFitError when the bytes are not a decodable image or cannot fit.
 */
export async function fitUnder(bytes: Buffer, mimeType: string, maxBytes: number): Promise<FittedImage> {
  let meta: sharp.Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
  } catch (err) {
    throw new ImageFitError(`the image cannot be decoded (${(err as Error).message})`);
  }
  const oriented = (meta.orientation ?? 1) >= 5; // EXIF orientations 5–8 swap width and height
  const width = (oriented ? meta.height : meta.width) ?? 0;
  const height = (oriented ? meta.width : meta.height) ?? 0;
  if (bytes.length <= maxBytes) return { bytes, mimeType, width, height };

  const keepAlpha = meta.hasAlpha === true;
  let longest = Math.max(width, height);
  for (;;) {
    for (const quality of QUALITIES) {
      const pipeline = sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, pages: 1 })
        .rotate() // apply EXIF orientation; metadata is not copied to the output
        .resize({ width: longest, height: longest, fit: 'inside', withoutEnlargement: true });
      const encoded = keepAlpha
        ? pipeline.webp({ quality, alphaQuality: quality, effort: 4 })
        : pipeline.jpeg({ quality, mozjpeg: true });
      const { data, info } = await encoded.toBuffer({ resolveWithObject: true });
      if (data.length <= maxBytes) {
        return { bytes: data, mimeType: keepAlpha ? 'image/webp' : 'image/jpeg', width: info.width, height: info.height };
      }
    }
    const next = Math.floor(longest * SHRINK);
    if (next < MIN_LONGEST_SIDE) {
      throw new ImageFitError(`the image cannot be made smaller than ${maxBytes} bytes without shrinking it below ${MIN_LONGEST_SIDE} pixels`);
    }
    longest = next;
  }
}
