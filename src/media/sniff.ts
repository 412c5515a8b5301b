import { imageSize } from 'image-size';
import type { MediaMimeType } from './media.types';

/** The type the bytes say they are, from their magic numbers; null when none matches. */
export function sniffImageType(bytes: Uint8Array): MediaMimeType | null {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 6 && (b.toString('latin1', 0, 6) === 'GIF87a' || b.toString('latin1', 0, 6) === 'GIF89a')) return 'image/gif';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return null;
}

const IMAGE_SIZE_TYPES: Record<MediaMimeType, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

export type ImageProbe =
  | { ok: true; mimeType: MediaMimeType; width: number; height: number }
  | { ok: false; reason: 'unsupported' | 'damaged'; message: string };

/**
 * Sniffs the type and reads the pixel size from the headers (image-size; no decode). The
 * client's Content-Type and file name are never trusted: a PNG named cat.jpg is a PNG, and an
 * HTML page sent as image/png is refused.
 */
export function probeImage(bytes: Uint8Array): ImageProbe {
  const mimeType = sniffImageType(bytes);
  if (mimeType === null) {
    return { ok: false, reason: 'unsupported', message: 'the file is not a PNG, JPEG, WebP or GIF image (checked from its content, not its name or Content-Type)' };
  }
  try {
    const size = imageSize(bytes);
    if (size.type !== IMAGE_SIZE_TYPES[mimeType] || !size.width || !size.height) throw new Error('header mismatch');
    // EXIF orientations 5–8 display the image turned a quarter: report the size people see.
    const turned = size.orientation !== undefined && size.orientation >= 5;
    return { ok: true, mimeType, width: turned ? size.height : size.width, height: turned ? size.width : size.height };
  } catch {
    return { ok: false, reason: 'damaged', message: `the file starts like ${mimeType} but its header is damaged or truncated (its pixel size cannot be read)` };
  }
}
