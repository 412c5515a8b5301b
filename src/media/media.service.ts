import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { AuthContext } from '../access/auth-context';
import { AuditService } from '../audit/audit.service';
import { conflict, DomainError, ErrorCode, invalidInput, notFound } from '../common/errors';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, toPage } from '../common/pagination';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { JobsService } from '../jobs/jobs.service';
import { countFrames } from '../common/images/image-processing';
import { MediaRepository } from './media.repository';
import { MAX_ALT_LENGTH, MAX_IMAGE_FRAMES, MAX_MEDIA_BYTES, MediaInfo } from './media.types';
import { MediaUrlSigner } from './media-url';
import { framesProblem, pixelsProblem, probeImage, quotaProblem } from './sniff';

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

export interface MediaUsageView {
  bytes: number;
  count: number;
  quotaBytes: number;
  quotaCount: number;
}

/** Post ids named in a refused delete; the rest are counted. */
const LISTED_POSTS = 10;

@Injectable()
export class MediaService {
  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly media: MediaRepository,
    private readonly jobs: JobsService,
    @Inject(MediaUrlSigner) private readonly signer: MediaUrlSigner,
    private readonly audit: AuditService,
  ) {}

  async upload(auth: AuthContext, bytes: Buffer | undefined, alt: string): Promise<MediaView> {
    const workspaceId = auth.workspaceId;
    if (!bytes || bytes.length === 0) {
      throw invalidInput('send the image as multipart/form-data in a field named "file" (and its alt text in a field named "alt")');
    }
    // multer stops at the limit already; this guards any other caller.
    if (bytes.length > MAX_MEDIA_BYTES) throw new DomainError(ErrorCode.PayloadTooLarge, 'the image is larger than the 5 MB limit');
    const probe = probeImage(bytes);
    if (!probe.ok) {
      throw probe.reason === 'unsupported' ? new DomainError(ErrorCode.UnsupportedMediaType, probe.message) : invalidInput(probe.message);
    }
    // Measured from the header: a bomb is refused before any pixel is decoded.
    const tooManyPixels = pixelsProblem(probe.width, probe.height);
    if (tooManyPixels) throw new DomainError(ErrorCode.PayloadTooLarge, tooManyPixels);
    if (probe.mimeType === 'image/gif' || probe.mimeType === 'image/webp') {
      const frames = await countFrames(bytes);
      if (frames === null)
        throw invalidInput(`the file starts like ${probe.mimeType} but its frames cannot be read (damaged or truncated)`);
      const tooManyFrames = framesProblem(frames, MAX_IMAGE_FRAMES);
      if (tooManyFrames) throw new DomainError(ErrorCode.PayloadTooLarge, tooManyFrames);
    }
    const quota = { bytes: this.config.media.quotaBytes, count: this.config.media.quotaCount };
    const row = await this.media.insertWithinQuota(
      {
        workspaceId,
        mimeType: probe.mimeType,
        width: probe.width,
        height: probe.height,
        alt: checkAlt(alt),
        sha256: createHash('sha256').update(bytes).digest(),
        bytes,
      },
      quota,
    );
    if (!row) {
      const usage = await this.media.usage(workspaceId);
      throw conflict(
        quotaProblem(usage, quota, bytes.length) ??
          "the workspace's media quota is used up; delete media (DELETE /v1/media/:id) and try again",
      );
    }
    await this.audit.record(null, auth, {
      kind: 'media',
      action: 'create',
      subjectId: row.id,
      summary: `Uploaded an image (${row.mimeType}, ${row.width}×${row.height})`,
      after: { alt: row.alt },
    });
    return toMediaView(row);
  }

  async list(workspaceId: string, limit = DEFAULT_PAGE_SIZE, cursor?: string): Promise<Page<MediaView>> {
    const rows = await this.media.list(workspaceId, decodeCursor(cursor), limit);
    return toPage(rows, limit, toMediaView);
  }

  async usage(workspaceId: string): Promise<MediaUsageView> {
    const usage = await this.media.usage(workspaceId);
    return { ...usage, quotaBytes: this.config.media.quotaBytes, quotaCount: this.config.media.quotaCount };
  }

  /**
   * DELETE /v1/media/:id. Refused (409, naming the posts) while a job that may still send the
   * image exists — waiting, in flight, or dead and so requeueable — so that deleting an image
   * never silently turns a scheduled post into a failed one. A post accepted in the very
   * instant of the delete can still slip through; its job then fails as poison ("media … is
   * missing") and waits in the dead-letter queue, where a person sees why.
   */
  async delete(auth: AuthContext, id: string): Promise<void> {
    const workspaceId = auth.workspaceId;
    const before = await this.media.find(workspaceId, id);
    if (!before) throw notFound('media', id);
    const posts = (await this.jobs.postsNeedingMedia(workspaceId, id, LISTED_POSTS + 1)).map((p) => p.postId);
    if (posts.length > 0) {
      const listed = posts.slice(0, LISTED_POSTS).join(', ') + (posts.length > LISTED_POSTS ? ' and more' : '');
      throw conflict(
        `media ${id} is still needed by posts not yet published or waiting in the dead-letter queue: ${listed}. ` +
          'Take it out of them (PATCH /v1/posts/:id, or PATCH /v1/dlq/:jobId for a dead job), cancel them, or discard their dead jobs, then delete it',
      );
    }
    if (!(await this.media.delete(workspaceId, id))) throw notFound('media', id);
    await this.audit.record(null, auth, {
      kind: 'media',
      action: 'remove',
      subjectId: id,
      summary: `Deleted an image (${before.mimeType}, ${before.width}×${before.height})`,
      before: { alt: before.alt },
    });
  }

  async get(workspaceId: string, id: string): Promise<MediaView & { url: string }> {
    const row = await this.media.find(workspaceId, id);
    if (!row) throw notFound('media', id);
    return { ...toMediaView(row), url: this.signer.url(row.id, new Date()) };
  }

  async setAlt(auth: AuthContext, id: string, alt: string): Promise<MediaView> {
    const before = await this.media.find(auth.workspaceId, id);
    const row = await this.media.updateAlt(auth.workspaceId, id, checkAlt(alt));
    if (!row || !before) throw notFound('media', id);
    if (before.alt !== row.alt) {
      await this.audit.record(null, auth, {
        kind: 'media',
        action: 'update',
        subjectId: id,
        summary: 'Changed the alt text of an image',
        before: { alt: before.alt },
        after: { alt: row.alt },
      });
    }
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

  /** The workspace's media among `ids` that exist (any order): one query, nothing refused (the composer's preview). */
  findExisting(workspaceId: string, ids: readonly string[]): Promise<MediaInfo[]> {
    return ids.length === 0 ? Promise.resolve([]) : this.media.findMany(workspaceId, [...ids]);
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
      if (ids.findIndex((other) => other.toLowerCase() === id.toLowerCase()) !== i)
        throw invalidInput(`${field}: media id ${id} is listed twice`);
      return m;
    });
  }
}
