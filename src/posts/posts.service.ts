import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { AuthContext } from '../access/auth-context';
import { AuditService } from '../audit/audit.service';
import { diffFields } from '../audit/audit.types';
import { canonicalHash } from '../common/canonical-json';
import { parseInstant } from '../common/instant';
import { applyContentPatch } from './content-patch';
import { conflict, DomainError, ErrorCode, invalidInput, notFound } from '../common/errors';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, toPage } from '../common/pagination';
import type { JobPayload, Provider, ThreadPart } from '../connectors/connector.interface';
import { JobRow, toJobView } from '../jobs/job.types';
import { JobsService } from '../jobs/jobs.service';
import { AccountsService } from '../accounts/accounts.service';
import { MediaService } from '../media/media.service';
import type { MediaInfo } from '../media/media.types';
import { enqueueStatus } from '../queue/job-lifecycle';
import { JobLifecycle } from '../queue/job-lifecycle.service';
import type { NewJob } from '../queue/queue.types';
import { IdempotencyRepository } from './idempotency.repository';
import { validateForPlatform, validateThreadForPlatform } from './platform-rules';
import { derivePostStatus } from './post-status';
import type { PostRow, PostView } from './post.types';
import type { CreatePostDto, ListPostsQuery, ThreadPartDto, UpdatePostDto } from './posts.dto';
import { POST_PARAMS, PostsRepository } from './posts.repository';

export interface CreateResult {
  status: number;
  body: unknown;
  replayed: boolean;
}

@Injectable()
export class PostsService {
  constructor(
    private readonly posts: PostsRepository,
    private readonly jobs: JobsService,
    private readonly accounts: AccountsService,
    private readonly idempotency: IdempotencyRepository,
    private readonly lifecycle: JobLifecycle,
    private readonly media: MediaService,
    private readonly audit: AuditService,
  ) {}

  /**
   * POST /v1/posts. With an Idempotency-Key: same key and same body (as parsed JSON) → the
   * first answer again; another body → 422; while the first is still running → 409.
   */
  async create(auth: AuthContext, dto: CreatePostDto, rawBody: unknown, idempotencyKey?: string): Promise<CreateResult> {
    const workspaceId = auth.workspaceId;
    if (idempotencyKey === undefined) return { status: 201, body: await this.createNow(auth, dto), replayed: false };
    if (idempotencyKey.length < 1 || idempotencyKey.length > 255) {
      throw invalidInput('Idempotency-Key must be 1 to 255 characters');
    }
    const begin = await this.idempotency.begin(workspaceId, idempotencyKey, canonicalHash(rawBody));
    switch (begin.kind) {
      case 'replay':
        return { status: begin.status, body: begin.body, replayed: true };
      case 'mismatch':
        throw new DomainError(
          ErrorCode.IdempotencyMismatch,
          'this Idempotency-Key was already used with a different request body; use a new key for a different post',
        );
      case 'in_flight':
        throw conflict('a request with this Idempotency-Key is still being processed; retry in a moment');
      case 'new':
        try {
          return { status: 201, body: await this.createNow(auth, dto, idempotencyKey), replayed: false };
        } catch (err) {
          await this.idempotency.abandon(workspaceId, idempotencyKey);
          throw err;
        }
    }
  }

  private validateSchedule(scheduledAt: Date, publishBy: Date | null, now: Date): void {
    if (publishBy === null) return;
    if (publishBy.getTime() <= scheduledAt.getTime()) {
      throw invalidInput(`publishBy (${publishBy.toISOString()}) must be after scheduledAt (${scheduledAt.toISOString()})`);
    }
    if (publishBy.getTime() <= now.getTime()) throw invalidInput(`publishBy (${publishBy.toISOString()}) is in the past`);
  }

  /** The post's media, looked up in the workspace: an unknown or another workspace's id is a 400 naming it. */
  private async resolveMedia(workspaceId: string, media: string[] | undefined): Promise<MediaInfo[]> {
    return this.media.requireMany(workspaceId, media ?? []);
  }

  /** A thread's parts as stored, each part's media looked up in the workspace (a 400 names `thread.i.media`). */
  private async resolveThread(
    workspaceId: string,
    dto: ThreadPartDto[] | null | undefined,
  ): Promise<{ thread: ThreadPart[] | null; media: MediaInfo[][] }> {
    if (!dto) return { thread: null, media: [] };
    const media = await Promise.all(dto.map((part, i) => this.media.requireMany(workspaceId, part.media ?? [], `thread.${i}.media`)));
    return { thread: dto.map((part, i) => ({ text: part.text, link: part.link ?? null, media: media[i].map((m) => m.id) })), media };
  }

  /**
   * Platform limits at intake (docs/api.md "Limits"), each target with its own platform and its effective
   * text (its override, else the post's); a thread's every part too (docs/api.md "Threads"), and a
   * platform without threads refuses one. Every problem of every target in one 400.
   */
  private checkPlatforms(
    targets: { label: string; provider: Provider; text: string }[],
    media: MediaInfo[],
    link: string | null,
    thread: { thread: ThreadPart[] | null; media: MediaInfo[][] } = { thread: null, media: [] },
  ): void {
    const problems: string[] = [];
    const parts = (thread.thread ?? []).map((p, i) => ({ text: p.text, link: p.link, media: thread.media[i] ?? [] }));
    for (const t of targets) {
      problems.push(...validateForPlatform(t.provider, { text: t.text, media, link }).map((p) => `${t.label} (${t.provider}): ${p}`));
      problems.push(...validateThreadForPlatform(t.provider, parts).map((p) => `${t.label} (${t.provider}): ${p}`));
    }
    if (problems.length > 0) throw invalidInput(problems.join('; '));
  }

  private async createNow(auth: AuthContext, dto: CreatePostDto, idempotencyKey?: string): Promise<PostView> {
    const workspaceId = auth.workspaceId;
    const now = new Date();
    const scheduledAt = dto.scheduledAt ? parseInstant(dto.scheduledAt, 'scheduledAt') : now;
    const publishBy = dto.publishBy ? parseInstant(dto.publishBy, 'publishBy') : null;
    this.validateSchedule(scheduledAt, publishBy, now);
    const mediaInfo = await this.resolveMedia(workspaceId, dto.media);
    const media = mediaInfo.map((m) => m.id);
    const thread = await this.resolveThread(workspaceId, dto.thread);

    const seen = new Set<string>();
    dto.targets.forEach((t, i) => {
      const id = t.accountId.toLowerCase();
      if (seen.has(id)) throw invalidInput(`targets.${i}.accountId: account ${t.accountId} is listed twice`);
      seen.add(id);
    });
    const accounts = new Map((await this.accounts.findMany(workspaceId, [...seen])).map((a) => [a.id, a]));
    const jobs: NewJob[] = dto.targets.map((t, i) => {
      const account = accounts.get(t.accountId.toLowerCase());
      // Another workspace's account is "unknown" too: never confirm that an id exists elsewhere.
      if (!account) throw invalidInput(`targets.${i}.accountId: unknown account ${t.accountId}`);
      const id = randomUUID();
      return {
        id,
        accountId: account.id,
        provider: account.provider,
        status: enqueueStatus(account.status === 'active'),
        textOverride: t.text ?? null,
        idempotencyKey: id,
      };
    });
    this.checkPlatforms(
      jobs.map((j, i) => ({ label: `targets.${i}`, provider: j.provider as Provider, text: j.textOverride ?? dto.text })),
      mediaInfo,
      dto.link ?? null,
      thread,
    );

    const post: PostRow = {
      id: randomUUID(),
      workspaceId,
      text: dto.text,
      title: dto.title ?? null,
      link: dto.link ?? null,
      media,
      metadata: dto.metadata ?? null,
      thread: thread.thread,
      scheduledAt,
      publishBy,
      createdAt: now,
      updatedAt: now,
    };
    // Jobs in id order, the order GET /v1/posts/:id lists them in.
    jobs.sort((a, b) => (a.id < b.id ? -1 : 1));
    const payloadFor = (j: NewJob) => this.payload(post, j.textOverride);
    // The answer is known before the write (every id and time is chosen here), so it is stored
    // for Idempotency-Key replays in the same statement that writes the post.
    const view = this.toView(
      post,
      jobs.map((j) => ({
        id: j.id,
        postId: post.id,
        accountId: j.accountId,
        workspaceId,
        provider: j.provider as Provider,
        status: j.status,
        runAt: scheduledAt,
        attemptCount: 0,
        attemptBase: 0,
        idempotencyKey: j.idempotencyKey,
        textOverride: j.textOverride,
        payload: payloadFor(j),
        payloadEditedAt: null,
        errorClass: null,
        lastError: null,
        deadReason: null,
        remoteId: null,
        remoteUrl: null,
        parts: [],
        createdAt: now,
        updatedAt: now,
        finishedAt: null,
      })),
    );
    const enqueue = this.lifecycle.enqueue(
      POST_PARAMS + 1,
      { workspaceId, postId: post.id, runAt: scheduledAt, publishBy, createdAt: now, jobs },
      payloadFor,
    );
    await this.posts.create(post, enqueue, idempotencyKey === undefined ? null : { key: idempotencyKey, status: 201, body: view });
    // Committed: workers are woken now (this process's at once, others folded: QueueNotifier).
    if (jobs.some((j) => j.status === 'scheduled')) this.lifecycle.jobsAdded(post.scheduledAt);
    // After the post's one-statement write (the intake's hot path stays one round trip); a
    // replay of the same Idempotency-Key returns before this, so a post is recorded once.
    await this.audit.record(null, auth, {
      kind: 'post',
      action: 'create',
      subjectId: post.id,
      summary: `Scheduled a post for ${plural(jobs.length, 'account')}: “${excerptOf(post.text)}”`,
      after: { ...postFields(post), accounts: jobs.map((j) => j.accountId) },
    });
    return view;
  }

  private payload(post: PostRow, textOverride: string | null): JobPayload {
    return {
      text: textOverride ?? post.text,
      title: post.title,
      link: post.link,
      media: post.media,
      metadata: post.metadata,
      scheduledAt: post.scheduledAt.toISOString(),
      ...(post.thread ? { thread: post.thread } : {}),
    };
  }

  private toView(post: PostRow, jobs: JobRow[]): PostView {
    return {
      id: post.id,
      status: derivePostStatus(jobs),
      text: post.text,
      title: post.title,
      link: post.link,
      media: post.media,
      thread: post.thread,
      scheduledAt: post.scheduledAt.toISOString(),
      publishBy: post.publishBy?.toISOString() ?? null,
      metadata: post.metadata,
      createdAt: post.createdAt.toISOString(),
      updatedAt: post.updatedAt.toISOString(),
      jobs: jobs.map(toJobView),
    };
  }

  async get(workspaceId: string, id: string): Promise<PostView> {
    const post = await this.posts.find(workspaceId, id);
    if (!post) throw notFound('post', id);
    return this.toView(post, await this.jobs.forPosts(workspaceId, [id]));
  }

  async list(workspaceId: string, query: ListPostsQuery): Promise<Page<PostView>> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.posts.list(
      workspaceId,
      {
        status: query.status,
        from: query.from ? parseInstant(query.from, 'from') : undefined,
        to: query.to ? parseInstant(query.to, 'to') : undefined,
      },
      decodeCursor(query.cursor),
      limit,
    );
    const jobs = await this.jobs.forPosts(
      workspaceId,
      rows.slice(0, limit).map((p) => p.id),
    );
    const byPost = new Map<string, typeof jobs>();
    for (const j of jobs) byPost.set(j.postId, [...(byPost.get(j.postId) ?? []), j]);
    return toPage(rows, limit, (p) => this.toView(p, byPost.get(p.id) ?? []));
  }

  /** Edit or reschedule while no job has started (jobs locked, so no worker can start one meanwhile). */
  async update(auth: AuthContext, id: string, dto: UpdatePostDto): Promise<PostView> {
    const workspaceId = auth.workspaceId;
    if (dto.text === null) throw invalidInput('text cannot be empty');
    await this.posts.transaction(async (m) => {
      const jobs = await this.lifecycle.lockPostJobs(m, workspaceId, id);
      const post = await this.posts.find(workspaceId, id, m, true);
      if (!post) throw notFound('post', id);
      const started = jobs.filter((j) => j.attemptCount > 0 || !['scheduled', 'paused'].includes(j.status));
      if (started.length > 0) {
        throw conflict(
          `this post can no longer be edited: ${started.length} of its jobs already started (edit a failed job in the dead-letter queue instead)`,
        );
      }
      const now = new Date();
      const next: PostRow = {
        ...applyContentPatch(post, dto),
        scheduledAt: dto.scheduledAt ? parseInstant(dto.scheduledAt, 'scheduledAt') : post.scheduledAt,
        publishBy: dto.publishBy === undefined ? post.publishBy : dto.publishBy === null ? null : parseInstant(dto.publishBy, 'publishBy'),
      };
      this.validateSchedule(next.scheduledAt, next.publishBy, now);
      const mediaInfo = await this.resolveMedia(workspaceId, next.media);
      next.media = mediaInfo.map((mi) => mi.id);
      // `thread` absent: kept; null: the post becomes a single post; an array replaces the thread.
      const thread =
        dto.thread === undefined
          ? await this.resolveThread(workspaceId, post.thread?.map((p) => ({ ...p, link: p.link ?? undefined })) ?? null)
          : await this.resolveThread(workspaceId, dto.thread);
      next.thread = thread.thread;
      const waiting = (await this.jobs.forPosts(workspaceId, [id], m)).filter((j) => j.status === 'scheduled' || j.status === 'paused');
      this.checkPlatforms(
        waiting.map((j) => ({ label: `job ${j.id}`, provider: j.provider, text: j.textOverride ?? next.text })),
        mediaInfo,
        next.link,
        thread,
      );
      await this.posts.update(m, next);
      await this.lifecycle.reschedulePost(m, id, next.scheduledAt, next.publishBy, (override) => this.payload(next, override));
      const changes = diffFields(postFields(post), postFields(next));
      if (Object.keys(changes.after).length > 0) {
        await this.audit.record(m, auth, {
          kind: 'post',
          action: 'update',
          subjectId: id,
          summary: `Edited the post “${excerptOf(next.text)}”`,
          ...changes,
        });
      }
    });
    return this.get(workspaceId, id);
  }

  async cancel(auth: AuthContext, id: string): Promise<PostView> {
    const workspaceId = auth.workspaceId;
    await this.posts.transaction(async (m) => {
      await this.lifecycle.lockPostJobs(m, workspaceId, id);
      const post = await this.posts.find(workspaceId, id, m);
      if (!post) throw notFound('post', id);
      await this.lifecycle.cancelPost(m, workspaceId, id);
      await this.audit.record(m, auth, {
        kind: 'post',
        action: 'cancel',
        subjectId: id,
        summary: `Cancelled the post “${excerptOf(post.text)}”`,
      });
    });
    return this.get(workspaceId, id);
  }
}

/** A post's fields for the audit trail. */
function postFields(p: PostRow): Record<string, unknown> {
  return {
    text: p.text,
    title: p.title,
    link: p.link,
    media: p.media,
    metadata: p.metadata,
    thread: p.thread,
    scheduledAt: p.scheduledAt.toISOString(),
    publishBy: p.publishBy?.toISOString() ?? null,
  };
}

function excerptOf(text: string): string {
  const chars = [...text.replace(/\s+/g, ' ').trim()];
  return chars.length > 60 ? `${chars.slice(0, 60).join('')}…` : chars.join('');
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
