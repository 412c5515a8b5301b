import { Inject, Injectable } from '@nestjs/common';
import type { PayloadMedia } from '../connectors/connector.interface';
import { MediaRepository } from './media.repository';
import { MediaUrlSigner } from './media-url';

/** Bytes kept in memory across jobs, in total. Media rows never change their bytes, so a cached copy cannot go stale. */
const BYTES_CACHE_LIMIT = 64 * 1024 * 1024;

/**
 * Turns a job's media ids into what a connector receives. One query for the details (no
 * bytes; alt text is read fresh each time since it can be edited); the bytes are read only
 * when a connector asks (webhooks never do) and kept in a small LRU, because the same images
 * go to every target of a post, usually within a second of each other.
 */
@Injectable()
export class MediaResolver {
  private readonly bytes = new Map<string, Buffer>();
  private cachedBytes = 0;

  constructor(
    private readonly media: MediaRepository,
    @Inject(MediaUrlSigner) private readonly signer: MediaUrlSigner,
  ) {}

  /** In the job's order; an id no longer found (its workspace is gone) is left out, and the connector says so. */
  async resolve(workspaceId: string, ids: readonly string[], now: Date): Promise<PayloadMedia[]> {
    if (ids.length === 0) return [];
    const rows = new Map((await this.media.findMany(workspaceId, [...ids])).map((m) => [m.id, m]));
    const out: PayloadMedia[] = [];
    for (const id of ids) {
      const m = rows.get(id.toLowerCase());
      if (!m) continue;
      out.push({
        id: m.id,
        alt: m.alt,
        mimeType: m.mimeType,
        width: m.width,
        height: m.height,
        byteSize: m.byteSize,
        url: this.signer.url(m.id, now),
        read: () => this.read(workspaceId, m.id),
      });
    }
    return out;
  }

  private async read(workspaceId: string, id: string): Promise<Buffer> {
    const key = `${workspaceId}/${id}`;
    const hit = this.bytes.get(key);
    if (hit) {
      this.bytes.delete(key); // re-insert: Map order is the LRU order
      this.bytes.set(key, hit);
      return hit;
    }
    const bytes = await this.media.readBytes(workspaceId, id);
    if (!bytes) throw new Error(`media ${id} was deleted`);
    if (bytes.length <= BYTES_CACHE_LIMIT / 4) {
      this.bytes.set(key, bytes);
      this.cachedBytes += bytes.length;
      for (const [k, v] of this.bytes) {
        if (this.cachedBytes <= BYTES_CACHE_LIMIT) break;
        this.bytes.delete(k);
        this.cachedBytes -= v.length;
      }
    }
    return bytes;
  }
}
