import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { DomainError, ErrorCode, invalidInput, notFound } from '../common/errors';
import { MediaRepository } from './media.repository';
import { MAX_ALT_LENGTH, MAX_MEDIA_BYTES, MediaInfo } from './media.types';
import { MediaUrlSigner } from './media-url';
import { probeImage } from './sniff';

/** A media item as the API shows it (never the bytes). */
export interface MediaView {
  id: string;
  mimeType: string;
  byteSize: number;
  width: number | null;
  height: number | null;
  alt: string;
  sha256: string;
  createdAt: string;
}

export function toMediaView(m: MediaInfo): MediaView {
  return {
    id: m.id,
    mimeType: m.mimeType,
    byteSize: m.byteSize,
    width: m.width,
    height: m.height,
    alt: m.alt,
    sha256: m.sha256,
    createdAt: new Date(m.createdAt).toISOString(),
  };
}

function checkAlt(alt: string): string {
  if (alt.length > MAX_ALT_LENGTH) throw invalidInput(`alt is ${alt.length} characters, the limit is ${MAX_ALT_LENGTH}`);
  return alt;
}

@Injectable()
export class MediaService {
  constructor(
    private readonly media: MediaRepository,
    @Inject(MediaUrlSigner) private readonly signer: MediaUrlSigner,
  ) {}

  async upload(workspaceId: string, bytes: Buffer | undefined, alt: string): Promise<MediaView> {
    if (!bytes || bytes.length === 0) {
      throw invalidInput('send the image as multipart/form-data in a field named "file" (and its alt text in a field named "alt")');
    }
    // multer stops at the limit already; this guards any other caller.
    if (bytes.length > MAX_MEDIA_BYTES) throw new DomainError(ErrorCode.PayloadTooLarge, 'the image is larger than the 5 MB limit');
    const probe = probeImage(bytes);
    if (!probe.ok) {
      throw probe.reason === 'unsupported' ? new DomainError(ErrorCode.UnsupportedMediaType, probe.message) : invalidInput(probe.message);
    }
    const row = await this.media.insert({
      workspaceId,
      mimeType: probe.mimeType,
      width: probe.width,
      height: probe.height,
      alt: checkAlt(alt),
      sha256: createHash('sha256').update(bytes).digest(),
      bytes,
    });
    return toMediaView(row);
  }

  async get(workspaceId: string, id: string): Promise<MediaView & { url: string }> {
    const row = await this.media.find(workspaceId, id);
    if (!row) throw notFound('media', id);
    return { ...toMediaView(row), url: this.signer.url(row.id, new Date()) };
  }

  async setAlt(workspaceId: string, id: string, alt: string): Promise<MediaView> {
    const row = await this.media.updateAlt(workspaceId, id, checkAlt(alt));
    if (!row) throw notFound('media', id);
    return toMediaView(row);
  }

  /** GET /media/:id: the signed link is the authorization (no API key: webhook receivers fetch it). */
  async serve(id: string, exp: string | undefined, sig: string | undefined, now: Date) {
    const check = this.signer.check(id, exp, sig, now);
    if (check === 'invalid') throw new DomainError(ErrorCode.Forbidden, 'this media link is not valid (its signature does not match)');
    if (check === 'expired') throw new DomainError(ErrorCode.Forbidden, 'this media link has expired; ask the sender for a fresh one');
    const row = await this.media.readForServing(id);
    if (!row) throw notFound('media', id);
    return { ...row, maxAgeSeconds: Math.max(0, Number(exp) - Math.floor(now.getTime() / 1000)) };
  }

  /**
   * The workspace's media for `ids`, in the order given. An unknown id — or another
   * workspace's, which must look the same — is a 400 naming it (post intake and DLQ edits).
   */
  async requireMany(workspaceId: string, ids: readonly string[], field = 'media'): Promise<MediaInfo[]> {
    if (ids.length === 0) return [];
    const found = new Map((await this.media.findMany(workspaceId, [...ids])).map((m) => [m.id, m]));
    return ids.map((id, i) => {
      const m = found.get(id.toLowerCase());
      if (!m) throw invalidInput(`${field}: unknown media id ${id}`);
      if (ids.findIndex((other) => other.toLowerCase() === id.toLowerCase()) !== i) throw invalidInput(`${field}: media id ${id} is listed twice`);
      return m;
    });
  }
}
