import { imageSize } from 'image-size';
import { MAX_IMAGE_PIXELS, rasterTypeOf } from '../common/images/image-processing';
import type { MediaMimeType } from './media.types';

/**
 * The type the bytes say they are, from their magic numbers; null when none matches. The same
 * check guards every decode (common/images: uploads, Bluesky blobs, link-card thumbnails).
 */
export function sniffImageType(bytes: Uint8Array): MediaMimeType | null {
  return rasterTypeOf(bytes);
}

const IMAGE_SIZE_TYPES: Record<MediaMimeType, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

export type ImageProbe =
  { ok: true; mimeType: MediaMimeType; width: number; height: number } | { ok: false; reason: 'unsupported' | 'damaged'; message: string };

/**
 * Sniffs the type and reads the pixel size from the headers (image-size; no decode). The
 * client's Content-Type and file name are never trusted: a PNG named cat.jpg is a PNG, and an
 * HTML page sent as image/png is refused.
 */
export function probeImage(bytes: Uint8Array): ImageProbe {
  const mimeType = sniffImageType(bytes);
  if (mimeType === null) {
    return {
      ok: false,
      reason: 'unsupported',
      message: 'the file is not a PNG, JPEG, WebP or GIF image (checked from its content, not its name or Content-Type)',
    };
  }
  try {
    const size = imageSize(bytes);
    if (size.type !== IMAGE_SIZE_TYPES[mimeType] || !size.width || !size.height) throw new Error('header mismatch');
    // EXIF orientations 5–8 display the image turned a quarter: report the size people see.
    const turned = size.orientation !== undefined && size.orientation >= 5;
    return { ok: true, mimeType, width: turned ? size.height : size.width, height: turned ? size.width : size.height };
  } catch {
    return {
      ok: false,
      reason: 'damaged',
      message: `the file starts like ${mimeType} but its header is damaged or truncated (its pixel size cannot be read)`,
    };
  }
}

const int = (n: number) => n.toLocaleString('en-US');

/** Why an image of `width × height` is refused, or null (MAX_IMAGE_PIXELS, from the header). */
export function pixelsProblem(width: number, height: number, max: number = MAX_IMAGE_PIXELS): string | null {
  const pixels = width * height;
  if (pixels <= max) return null;
  return `the image is ${width} × ${height} pixels (${int(pixels)}); the limit is ${int(max)} pixels, the most that every platform takes (LinkedIn's limit)`;
}

/** Why an animation with `frames` frames is refused, or null. */
export function framesProblem(frames: number, max: number): string | null {
  return frames <= max ? null : `the animation has ${int(frames)} frames; the limit is ${int(max)} (LinkedIn's limit for GIFs)`;
}

function size(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${int(bytes)} bytes`;
}

/**
 * Why an upload of `adding` bytes does not fit the workspace's media quota, or null when it
 * does. The message says what is used, what the limit is and how to make room.
 */
export function quotaProblem(
  usage: { bytes: number; count: number },
  quota: { bytes: number; count: number },
  adding: number,
): string | null {
  const fix = 'delete media the workspace no longer needs (GET /v1/media, DELETE /v1/media/:id) or ask the operator to raise';
  if (usage.count + 1 > quota.count) {
    return `the workspace's media quota is full: ${int(usage.count)} of ${int(quota.count)} images stored; ${fix} MEDIA_QUOTA_COUNT`;
  }
  if (usage.bytes + adding > quota.bytes) {
    return `the workspace's media quota is full: ${size(usage.bytes)} of ${size(quota.bytes)} used, this image needs ${size(adding)} more; ${fix} MEDIA_QUOTA_BYTES`;
  }
  return null;
}
