/** The image types Herald accepts, sniffed from the bytes. */
export const MEDIA_MIME_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const;
export type MediaMimeType = (typeof MEDIA_MIME_TYPES)[number];

/** Largest upload (POST /v1/media), also the database's CHECK. */
export const MAX_MEDIA_BYTES = 5 * 1024 * 1024;
/** Longest alt text, also the database's CHECK (Bluesky's app stops at 2,000 characters too). */
export const MAX_ALT_LENGTH = 2000;

/** A media row without its bytes: what validation, the API and the worker need. */
export interface MediaInfo {
  id: string;
  workspaceId: string;
  mimeType: MediaMimeType;
  byteSize: number;
  width: number | null;
  height: number | null;
  alt: string;
  /** hex */
  sha256: string;
  createdAt: Date;
}

/** Most frames of an animated image (LinkedIn: GIFs up to 250 frames). */
export const MAX_IMAGE_FRAMES = 250;
