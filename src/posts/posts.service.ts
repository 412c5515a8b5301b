import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { AuthContext } from '../access/auth-context';
import { ApprovalPolicyService } from '../approval-policy/approval-policy.service';
import { ApprovalOperation, ApprovalState, approvalTransition } from '../approval-policy/approval-transitions';
import { AuditService } from '../audit/audit.service';
import { diffFields } from '../audit/audit.types';
import { canonicalHash } from '../common/canonical-json';
import { parseInstant } from '../common/instant';
import { applyContentPatch } from './content-patch';
import { conflict, DomainError, ErrorCode, invalidInput, notFound } from '../common/errors';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, toPage } from '../common/pagination';
import type { JobPayload, MastodonOptions, Provider, ThreadPart } from '../connectors/connector.interface';
import { JobRow, toJobView } from '../jobs/job.types';
import { AccountsService, PostTargetAccount } from '../accounts/accounts.service';
import { MediaService } from '../media/media.service';
import type { MediaInfo } from '../media/media.types';
import { enqueueStatus } from '../queue/job-lifecycle';
import { EventsService, ScheduledTarget } from '../events/events.service';
import { JobLifecycle } from '../queue/job-lifecycle.service';
import { JobReads } from '../queue/job-reads.service';
import { derivePostStatus } from '../queue/post-status';
import type { NewJob } from '../queue/queue.types';
import { IdempotencyRepository } from './idempotency.repository';
import { limitsFor, validateForPlatform, validateThreadForPlatform } from './platform-rules';
import { approvalStateOf } from './approval-state';
import { heldStatus } from './post-status';
import type { DraftTarget, PostRow, PostView, ScheduledPostRow } from './post.types';
import type { CreatePostDto, ListPostsQuery, ThreadPartDto, UpdatePostDto } from './posts.dto';
import { PostsRepository } from './posts.repository';
import { busy, isSlotTaken, MAX_TAKE_ATTEMPTS, PostingQueueService, QueuePlan } from '../posting-queue/posting-queue.service';
import type { Sql } from '../database/db';
import type { EmbeddedRead, SqlPiece } from '../database/statement';
import type { QueueSlotView } from '../posting-queue/posting-queue.dto';

export interface CreateResult {
  status: number;
  body: unknown;
  replayed: boolean;
}

@Injectable()
export class PostsService {
  constructor(
    private readonly posts: PostsRepository,
    private readonly accounts: AccountsService,
    private readonly idempotency: IdempotencyRepository,
    private readonly lifecycle: JobLifecycle,
    private readonly reads: JobReads,
    private readonly media: MediaService,
    private readonly audit: AuditService,
    private readonly approvals: ApprovalPolicyService,
    private readonly queue: PostingQueueService,
    private readonly events: EventsService,
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

  /** The thread after a PATCH: `thread` absent keeps the post's, null drops it (a single post), an array replaces it. */
  private patchedThread(workspaceId: string, post: PostRow, patch: ThreadPartDto[] | null | undefined) {
    if (patch !== undefined) return this.resolveThread(workspaceId, patch);
    return this.resolveThread(workspaceId, post.thread?.map((p) => ({ ...p, link: p.link ?? undefined })) ?? null);
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
    targets: CheckedTarget[],
    media: MediaInfo[],
    link: string | null,
    thread: { thread: ThreadPart[] | null; media: MediaInfo[][] } = { thread: null, media: [] },
  ): void {
    const problems: string[] = [];
    for (const t of targets) {
      // Each account's own limits: a Mastodon account's are its instance's (limitsFor).
      const limits = limitsFor(t.provider, t.config);
      const spoilerText = t.mastodon?.spoilerText ?? null;
      const parts = (thread.thread ?? []).map((p, i) => ({ text: p.text, link: p.link, media: thread.media[i] ?? [], spoilerText }));
      const named = (p: string) => `${t.label} (${t.provider}): ${p}`;
      problems.push(...validateForPlatform(t.provider, { text: t.text, media, link, spoilerText }, limits).map(named));
      problems.push(...validateThreadForPlatform(t.provider, parts, limits).map(named));
    }
    if (problems.length > 0) throw invalidInput(problems.join('; '));
  }

  /**
   * The jobs of `targets` (checked: no account twice, every account of the workspace), each in
   * the state its account allows (enqueueStatus), in id order.
   */
  private async buildJobs(
    workspaceId: string,
    targets: readonly DraftTarget[],
    carried: EmbeddedRead | null = null,
    known: PostTargetAccount[] | null = null,
  ): Promise<BuiltJobs> {
    const seen = await this.checkTargets(workspaceId, targets, carried, known);
    const built: BuiltJobs = { jobs: [], checks: [], mastodon: new Map() };
    targets.forEach((t, i) => {
      const account = seen.get(t.accountId.toLowerCase())!;
      const id = randomUUID();
      built.jobs.push({
        id,
        accountId: account.id,
        provider: account.provider,
        status: enqueueStatus(account.status === 'active'),
        textOverride: t.text ?? null,
        idempotencyKey: id,
      });
      const mastodon = mastodonOptionsOf(t);
      if (mastodon) built.mastodon.set(id, mastodon);
      built.checks.push({ label: `targets.${i}`, provider: account.provider, config: account.config, text: t.text ?? null, mastodon });
    });
    return built;
  }

  /**
   * No account twice, every account one of the workspace's; the accounts by lower-case id.
   * `carried`: another module's read answered by the accounts' statement (the approval mode).
   * `known`: the accounts as last read (a guess the post's statement checks), read again when null.
   */
  private async checkTargets(
    workspaceId: string,
    targets: readonly DraftTarget[],
    carried: EmbeddedRead | null = null,
    known: PostTargetAccount[] | null = null,
  ) {
    const seen = new Set<string>();
    targets.forEach((t, i) => {
      const id = t.accountId.toLowerCase();
      if (seen.has(id)) throw invalidInput(`targets.${i}.accountId: account ${t.accountId} is listed twice`);
      seen.add(id);
    });
    const accounts = new Map((known ?? (await this.accounts.findMany(workspaceId, [...seen], carried))).map((a) => [a.id, a]));
    targets.forEach((t, i) => {
      // Another workspace's account is "unknown" too: never confirm that an id exists elsewhere.
      const account = accounts.get(t.accountId.toLowerCase());
      if (!account) throw invalidInput(`targets.${i}.accountId: unknown account ${t.accountId}`);
      for (const field of ['visibility', 'spoilerText'] as const) {
        if (t[field] !== undefined && account.provider !== 'mastodon') {
          throw invalidInput(
            `targets.${i}.${field}: only Mastodon accounts take a ${field === 'visibility' ? 'visibility' : 'content warning'} (account ${t.accountId} is ${account.provider})`,
          );
        }
      }
    });
    return accounts;
  }

  /**
   * `attempt`: how many times the queue slot chosen was taken by another post meanwhile; `inTurn`:
   * a queued post runs after the workspace's earlier queued posts of this process (docs/api.md "The posting queue").
   */
  private async createNow(auth: AuthContext, dto: CreatePostDto, idempotencyKey?: string, attempt = 0, inTurn = false): Promise<PostView> {
    if (dto.status === 'draft') return this.createDraft(auth, dto, idempotencyKey);
    if (dto.queue && !inTurn) return this.queue.inTurn(auth.workspaceId, () => this.createNow(auth, dto, idempotencyKey, attempt, true));
    checkQueueOrTime(dto);
    // Not queued: first on the accounts as this process last read them, which the post's own
    // statement checks, with the approval setting (no read before the write). A guess that no
    // longer holds writes nothing, and neither does a request the guess finds invalid: both are
    // decided again from what the database holds, as if there had been no guess, so every answer
    // and every 400 is the one the accounts' read gives.
    // (Where the last read said this caller's posts need approval, a guess would be refused: none.)
    const guess =
      dto.queue || this.approvals.lastSaidRequired(auth)
        ? null
        : this.accounts.lastReadTargets(
            auth.workspaceId,
            dto.targets.map((t) => t.accountId),
          );
    if (guess) {
      try {
        return await this.schedule(auth, dto, idempotencyKey, attempt, guess);
      } catch (err) {
        const decideAgain = (err instanceof DomainError && err.code === ErrorCode.InvalidInput) || this.lifecycle.isRefusedStart(err);
        if (!decideAgain) throw err;
      }
    }
    return this.schedule(auth, dto, idempotencyKey, attempt, null);
  }

  /**
   * A post that is not a draft, on the accounts read now (`guess` null) or on `guess`, the
   * accounts as last read, written only if they and the approval setting still allow it as is.
   */
  private async schedule(
    auth: AuthContext,
    dto: CreatePostDto,
    idempotencyKey: string | undefined,
    attempt: number,
    guess: PostTargetAccount[] | null,
  ): Promise<PostView> {
    const workspaceId = auth.workspaceId;
    const now = new Date();
    const requestedAt = dto.scheduledAt ? parseInstant(dto.scheduledAt, 'scheduledAt') : now;
    const publishBy = dto.publishBy ? parseInstant(dto.publishBy, 'publishBy') : null;
    this.validateSchedule(requestedAt, publishBy, now);
    const mediaInfo = await this.resolveMedia(workspaceId, dto.media);
    const media = mediaInfo.map((m) => m.id);
    const thread = await this.resolveThread(workspaceId, dto.thread);

    // As sent (a 400 names an account id as the request spelled it); buildJobs matches them in lower case.
    const targets = dto.targets.map((t) => ({ ...t }));
    // Whether the post needs approval is read by the accounts' statement (one round trip for both);
    // on a guess, the post's statement checks that it needs none.
    const approval = guess ? null : this.approvals.requiredRead(auth);
    const { jobs, checks, mastodon } = await this.buildJobs(workspaceId, targets, approval, guess);
    this.checkPlatforms(
      checks.map((c) => ({ ...c, text: c.text ?? dto.text })),
      mediaInfo,
      dto.link ?? null,
      thread,
    );
    // `queue: true`: the next free slot of every target is the post's time, its rows written with the post
    // (a post waiting for approval keeps its slot while it waits).
    const postId = randomUUID();
    const queued = dto.queue
      ? await this.queue.plan(
          workspaceId,
          postId,
          jobs.map((j) => j.accountId),
          now,
          publishBy,
        )
      : null;
    const scheduledAt = queued?.at ?? requestedAt;
    try {
      // Where a post would be scheduled: one that needs approval waits for it instead (no jobs).
      if (approval && (approval.required ?? (await this.approvals.required(auth)))) {
        return await this.createPending(
          auth,
          dto,
          { id: postId, scheduledAt: dto.scheduledAt || queued ? scheduledAt : null, publishBy, media, thread: thread.thread, queued },
          idempotencyKey,
        );
      }
      const guards = guess ? [this.accounts.stillAsRead(workspaceId, guess), this.approvals.notRequiredPiece(auth)] : [];
      return await this.createScheduled(
        auth,
        dto,
        { postId, scheduledAt, publishBy, media, thread, now, jobs, mastodon, queued, guards },
        idempotencyKey,
      );
    } catch (err) {
      // Another post took that slot meanwhile (its commit came first): nothing was written; take the next.
      if (!queued || !isSlotTaken(err)) throw err;
      if (attempt + 1 >= MAX_TAKE_ATTEMPTS) throw busy();
      return this.createNow(auth, dto, idempotencyKey, attempt + 1, true);
    }
  }

  /** A new post written with its jobs (and its queue slots) in one statement. */
  private async createScheduled(
    auth: AuthContext,
    dto: CreatePostDto,
    p: {
      postId: string;
      scheduledAt: Date;
      publishBy: Date | null;
      media: string[];
      thread: { thread: ThreadPart[] | null; media: MediaInfo[][] };
      now: Date;
      jobs: NewJob[];
      mastodon: Map<string, MastodonOptions>;
      queued: QueuePlan | null;
      /** Boolean pieces the statement writes nothing without (the guess's checks). */
      guards: SqlPiece[];
    },
    idempotencyKey?: string,
  ): Promise<PostView> {
    const { scheduledAt, publishBy, media, thread, now, jobs, mastodon, queued, guards } = p;
    const workspaceId = auth.workspaceId;
    const post: ScheduledPostRow = {
      id: p.postId,
      workspaceId,
      text: dto.text,
      title: dto.title ?? null,
      link: dto.link ?? null,
      media,
      metadata: dto.metadata ?? null,
      thread: thread.thread,
      scheduledAt,
      publishBy,
      draftTargets: null,
      approval: null,
      createdAt: now,
      updatedAt: now,
    };
    // Jobs in id order, the order GET /v1/posts/:id lists them in.
    jobs.sort((a, b) => (a.id < b.id ? -1 : 1));
    const payloadFor = (j: NewJob) => this.payload(post, j.textOverride, mastodon.get(j.id));
    // The answer is known before the write (every id and time is chosen here), so it is stored
    // for Idempotency-Key replays in the same statement that writes the post.
    const view = this.toView(post, this.newJobRows(post, jobs, now, mastodon), queued?.view ?? null);
    const enqueue = this.lifecycle.enqueue(
      { workspaceId, postId: post.id, runAt: scheduledAt, publishBy, createdAt: now, jobs, guards },
      payloadFor,
    );
    // The audit entry is written by the post's own statement: it commits with the post or not at
    // all, and the intake costs one commit (it was a second statement and a second commit after
    // it). A replay of the same Idempotency-Key returns before this, so a post is recorded once.
    const audit = this.audit.recordCte(auth, {
      kind: 'post',
      action: 'create',
      subjectId: post.id,
      summary: `Scheduled a post for ${plural(jobs.length, 'account')}: “${excerptOf(post.text)}”`,
      after: { ...postFields(post), accounts: jobs.map((j) => j.accountId) },
    });
    // post.scheduled for the workspace's event endpoints, in the same statement (docs/events.md).
    const scheduledEvent = this.events.postScheduledCte({
      workspaceId,
      postId: post.id,
      scheduledAt,
      publishBy,
      targets: scheduledTargets(jobs),
      now,
    });
    const written = await this.posts.create(
      post,
      enqueue,
      idempotencyKey === undefined ? null : { key: idempotencyKey, status: 201, body: view },
      audit,
      scheduledEvent,
      queued ? [this.queue.takeCte(workspaceId, queued)] : [],
    );
    // Committed: workers are woken now (this process's at once, others folded: QueueNotifier).
    if (jobs.some((j) => j.status === 'scheduled')) this.lifecycle.jobsAdded(post.scheduledAt);
    if (written.events > 0) this.lifecycle.jobsAdded(now);
    return view;
  }

  /** The rows of jobs about to be written, for the answer (every value is chosen here). */
  private newJobRows(post: ScheduledPostRow, jobs: NewJob[], now: Date, mastodon: ReadonlyMap<string, MastodonOptions>): JobRow[] {
    return jobs.map((j) => ({
      id: j.id,
      postId: post.id,
      accountId: j.accountId,
      workspaceId: post.workspaceId,
      provider: j.provider as Provider,
      status: j.status,
      runAt: post.scheduledAt,
      attemptCount: 0,
      attemptBase: 0,
      idempotencyKey: j.idempotencyKey,
      textOverride: j.textOverride,
      payload: this.payload(post, j.textOverride, mastodon.get(j.id)),
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
    }));
  }

  /**
   * A draft: kept without a time and without jobs (the queue has nothing of it), never
   * published until scheduled (PATCH status: scheduled). Its accounts and media must exist;
   * platform limits are checked when it is scheduled, so a long text can be kept to trim later.
   */
  private async createDraft(auth: AuthContext, dto: CreatePostDto, idempotencyKey?: string): Promise<PostView> {
    const workspaceId = auth.workspaceId;
    if (dto.queue)
      throw invalidInput('a draft has no time: leave out queue (queue it when scheduling it: PATCH /v1/posts/{id} with queue: true)');
    if (dto.scheduledAt !== undefined || dto.publishBy !== undefined) {
      throw invalidInput(
        'a draft has no time: leave out scheduledAt and publishBy (give them when scheduling it: PATCH /v1/posts/{id} with status "scheduled")',
      );
    }
    const media = (await this.resolveMedia(workspaceId, dto.media)).map((m) => m.id);
    const thread = await this.resolveThread(workspaceId, dto.thread);
    const draftTargets = draftTargetsOf(dto.targets);
    await this.checkTargets(workspaceId, draftTargets);
    const now = new Date();
    const post: PostRow = {
      id: randomUUID(),
      workspaceId,
      text: dto.text,
      title: dto.title ?? null,
      link: dto.link ?? null,
      media,
      metadata: dto.metadata ?? null,
      thread: thread.thread,
      scheduledAt: null,
      publishBy: null,
      draftTargets,
      approval: null,
      createdAt: now,
      updatedAt: now,
    };
    const view = this.toView(post, [], null);
    await this.posts.createDraft(post, idempotencyKey === undefined ? null : { key: idempotencyKey, status: 201, body: view });
    await this.audit.record(null, auth, {
      kind: 'post',
      action: 'create',
      subjectId: post.id,
      summary: `Saved a draft for ${plural(draftTargets.length, 'account')}: “${excerptOf(post.text)}”`,
      after: { ...postFields(post), accounts: draftTargets.map((t) => t.accountId) },
    });
    return view;
  }

  /**
   * A new post that needs approval (checked as a scheduled one): kept with its accounts and the
   * time asked for (none: it goes out when approved), no jobs; its step, the owners' mail and the
   * audit entry in the same transaction. The answer is 201 with status pending_approval.
   */
  private async createPending(
    auth: AuthContext,
    dto: CreatePostDto,
    held: {
      id: string;
      scheduledAt: Date | null;
      publishBy: Date | null;
      media: string[];
      thread: ThreadPart[] | null;
      queued: QueuePlan | null;
    },
    idempotencyKey?: string,
  ): Promise<PostView> {
    const now = new Date();
    const post: PostRow = {
      id: held.id,
      workspaceId: auth.workspaceId,
      text: dto.text,
      title: dto.title ?? null,
      link: dto.link ?? null,
      media: held.media,
      metadata: dto.metadata ?? null,
      thread: held.thread,
      scheduledAt: held.scheduledAt,
      publishBy: held.publishBy,
      draftTargets: draftTargetsOf(dto.targets),
      approval: 'pending',
      createdAt: now,
      updatedAt: now,
    };
    const view = this.toView(post, [], held.queued?.view ?? null);
    await this.posts.transaction(async (m) => {
      await this.posts.createDraft(post, idempotencyKey === undefined ? null : { key: idempotencyKey, status: 201, body: view }, m);
      // Its queue slot is kept while it waits (a slot taken meanwhile fails the transaction: createNow plans again).
      if (held.queued) await this.queue.take(m, auth.workspaceId, held.queued);
      await this.audit.record(m, auth, {
        kind: 'post',
        action: 'create',
        subjectId: post.id,
        summary: `Wrote a post for ${plural(post.draftTargets?.length ?? 0, 'account')}, to be approved: “${excerptOf(post.text)}”`,
        after: { ...postFields(post), accounts: (post.draftTargets ?? []).map((t) => t.accountId) },
      });
      await this.approvals.hold(m, auth, { postId: post.id, text: post.text, step: 'submitted' });
    });
    return view;
  }

  /** What one job publishes: the post, the target's own text, and a Mastodon target's visibility and content warning. */
  private payload(post: ScheduledPostRow, textOverride: string | null, mastodon: MastodonOptions | undefined): JobPayload {
    return {
      text: textOverride ?? post.text,
      title: post.title,
      link: post.link,
      media: post.media,
      metadata: post.metadata,
      scheduledAt: post.scheduledAt.toISOString(),
      ...(post.thread ? { thread: post.thread } : {}),
      ...(mastodon ? { mastodon } : {}),
    };
  }

  private toView(post: PostRow, jobs: JobRow[], queueSlot: QueueSlotView | null): PostView {
    return {
      id: post.id,
      status: post.draftTargets !== null ? heldStatus(post.approval) : derivePostStatus(jobs),
      text: post.text,
      title: post.title,
      link: post.link,
      media: post.media,
      thread: post.thread,
      scheduledAt: post.scheduledAt?.toISOString() ?? null,
      publishBy: post.publishBy?.toISOString() ?? null,
      metadata: post.metadata,
      draftTargets: post.draftTargets,
      queueSlot,
      createdAt: post.createdAt.toISOString(),
      updatedAt: post.updatedAt.toISOString(),
      jobs: jobs.map(toJobView),
    };
  }

  async get(workspaceId: string, id: string): Promise<PostView> {
    const post = await this.posts.find(workspaceId, id);
    if (!post) throw notFound('post', id);
    const slots = await this.queue.slotsOfPosts(workspaceId, [id]);
    return this.toView(post, await this.reads.jobsOfPosts(workspaceId, [id]), slots.get(id) ?? null);
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
      (postId) => this.reads.postStatusOf(postId),
    );
    const ids = rows.slice(0, limit).map((p) => p.id);
    const jobs = await this.reads.jobsOfPosts(workspaceId, ids);
    const slots = await this.queue.slotsOfPosts(workspaceId, ids);
    const byPost = new Map<string, typeof jobs>();
    for (const j of jobs) if (j.postId !== null) byPost.set(j.postId, [...(byPost.get(j.postId) ?? []), j]);
    return toPage(rows, limit, (p) => this.toView(p, byPost.get(p.id) ?? [], slots.get(p.id) ?? null));
  }

  /** Edit or reschedule while no job has started (jobs locked, so no worker can start one meanwhile); edit or schedule a draft. */
  async update(auth: AuthContext, id: string, dto: UpdatePostDto): Promise<PostView> {
    const workspaceId = auth.workspaceId;
    if (dto.text === null) throw invalidInput('text cannot be empty');
    checkQueueOrTime(dto);
    let woke: Date | null = null;
    await this.posts.transaction(async (m) => {
      const jobs = await this.lifecycle.lockPostJobs(m, workspaceId, id);
      const post = await this.posts.find(workspaceId, id, m, true);
      if (!post) throw notFound('post', id);
      if (post.approval === 'expired') throw conflict(refusal('expired', 'edit'));
      if (post.draftTargets !== null) {
        woke = await this.updateDraft(m, auth, post, dto);
        return;
      }
      if (dto.targets !== undefined) {
        throw invalidInput(
          "targets can be changed only on a draft: a scheduled post's accounts are fixed (cancel it and schedule a new one to change them)",
        );
      }
      if (approvalStateOf(post, jobs) === 'cancelled') throw conflict(refusal('cancelled', 'edit'));
      const started = jobs.filter((j) => j.attemptCount > 0 || !['scheduled', 'paused'].includes(j.status));
      if (started.length > 0) {
        throw conflict(
          `this post can no longer be edited: ${started.length} of its jobs already started (edit a failed job in the dead-letter queue instead)`,
        );
      }
      const now = new Date();
      const next = {
        ...applyContentPatch(post, dto),
        scheduledAt: dto.scheduledAt ? parseInstant(dto.scheduledAt, 'scheduledAt') : (post.scheduledAt as Date),
        publishBy: dto.publishBy === undefined ? post.publishBy : dto.publishBy === null ? null : parseInstant(dto.publishBy, 'publishBy'),
        draftTargets: null,
        approval: null,
      };
      this.validateSchedule(next.scheduledAt, next.publishBy, now);
      const mediaInfo = await this.resolveMedia(workspaceId, next.media);
      next.media = mediaInfo.map((mi) => mi.id);
      const thread = await this.patchedThread(workspaceId, post, dto.thread);
      next.thread = thread.thread;
      const waiting = (await this.reads.jobsOfPosts(workspaceId, [id], m)).filter((j) => j.status === 'scheduled' || j.status === 'paused');
      const configs = new Map(
        (
          await this.accounts.findMany(
            workspaceId,
            waiting.map((j) => j.accountId),
          )
        ).map((a) => [a.id, a.config]),
      );
      next.scheduledAt = await this.queueOnEdit(
        m,
        workspaceId,
        post,
        dto,
        next.scheduledAt,
        next.publishBy,
        now,
        waiting.map((j) => j.accountId),
      );
      this.checkPlatforms(
        waiting.map((j) => ({
          label: `job ${j.id}`,
          provider: j.provider,
          config: configs.get(j.accountId) ?? null,
          text: j.textOverride ?? next.text,
          mastodon: j.payload.mastodon ?? null,
        })),
        mediaInfo,
        next.link,
        thread,
      );
      if (await this.approvals.required(auth, m)) {
        // An edit of a post that needs approval needs it again: back to waiting, its jobs removed here.
        if ((await this.lifecycle.withdrawPost(m, workspaceId, id)) !== jobs.length) throw conflict('a job of this post started meanwhile');
        await this.posts.update(m, { ...next, draftTargets: targetsOfJobs(waiting), approval: 'pending' });
        await this.audit.record(m, auth, {
          kind: 'post',
          action: 'update',
          subjectId: id,
          summary: `Edited the post “${excerptOf(next.text)}”`,
          ...diffFields(postFields(post), postFields(next)),
        });
        await this.approvals.hold(m, auth, { postId: id, text: next.text, step: 'resubmitted' });
        return;
      }
      await this.posts.update(m, next);
      // Each job keeps its own settings (its text override, a Mastodon target's visibility and content warning).
      await this.lifecycle.reschedulePost(m, id, next.scheduledAt, next.publishBy, (override, previous) =>
        this.payload(next, override, previous.mastodon),
      );
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
    if (woke !== null) this.lifecycle.jobsAdded(woke);
    return this.get(workspaceId, id);
  }

  /**
   * A draft edited (its accounts too), or scheduled (`status: scheduled`): then its jobs are
   * written with the time, checked as a new post is. Returns the time to wake workers for after
   * the commit, when a job is due to run.
   */
  private async updateDraft(m: Sql, auth: AuthContext, post: PostRow, dto: UpdatePostDto): Promise<Date | null> {
    const workspaceId = auth.workspaceId;
    // A post waiting for approval is edited as one being scheduled (its time may change), and keeps waiting.
    const pending = post.approval === 'pending';
    const scheduling = dto.status === 'scheduled' || dto.queue === true || pending;
    if (!scheduling && (dto.scheduledAt !== undefined || dto.publishBy !== undefined)) {
      throw invalidInput('a draft has no time: send status "scheduled" with scheduledAt (default: now) to schedule it');
    }
    const draftTargets = dto.targets === undefined ? (post.draftTargets ?? []) : draftTargetsOf(dto.targets);
    const content = applyContentPatch(post, dto);
    const mediaInfo = await this.resolveMedia(workspaceId, content.media);
    content.media = mediaInfo.map((mi) => mi.id);
    const thread = await this.patchedThread(workspaceId, post, dto.thread);
    content.thread = thread.thread;
    if (!scheduling) {
      await this.checkTargets(workspaceId, draftTargets);
      const next: PostRow = { ...content, draftTargets };
      await this.posts.update(m, next);
      const changes = diffFields({ ...postFields(post), accounts: post.draftTargets }, { ...postFields(next), accounts: draftTargets });
      if (Object.keys(changes.after).length > 0) {
        await this.audit.record(m, auth, {
          kind: 'post',
          action: 'update',
          subjectId: post.id,
          summary: `Edited the draft “${excerptOf(next.text)}”`,
          ...changes,
        });
      }
      return null;
    }
    const now = new Date();
    const asked = dto.scheduledAt ? parseInstant(dto.scheduledAt, 'scheduledAt') : pending ? post.scheduledAt : null;
    let scheduledAt = asked ?? now;
    const publishBy =
      dto.publishBy === undefined
        ? pending
          ? post.publishBy
          : null
        : dto.publishBy === null
          ? null
          : parseInstant(dto.publishBy, 'publishBy');
    this.validateSchedule(scheduledAt, publishBy, now);
    let slot: QueuePlan | null = null;
    if (dto.queue) {
      // `queue: true`: the next free slot of every target, taken in this transaction (a slot the
      // post held while waiting for approval is given back first).
      const built = await this.buildJobs(workspaceId, draftTargets);
      this.checkHeld(built, content, mediaInfo, thread);
      await this.queue.release(m, workspaceId, post.id);
      slot = await this.queue.takeNext(
        m,
        workspaceId,
        post.id,
        built.jobs.map((j) => j.accountId),
        now,
        publishBy,
      );
      scheduledAt = slot.at;
    } else if (dto.scheduledAt !== undefined) {
      // Another time given: the slot it held is free for the next queued post.
      await this.queue.release(m, workspaceId, post.id);
    }
    if (pending || (await this.approvals.required(auth, m))) {
      // Where the draft would be scheduled: it waits for approval instead (checked as it would be scheduled).
      this.checkHeld(await this.buildJobs(workspaceId, draftTargets), content, mediaInfo, thread);
      const held: PostRow = { ...content, scheduledAt: slot?.at ?? asked, publishBy, draftTargets, approval: 'pending' };
      await this.posts.update(m, held);
      const changes = diffFields(postFields(post), postFields(held));
      if (pending && Object.keys(changes.after).length > 0) {
        await this.audit.record(m, auth, {
          kind: 'post',
          action: 'update',
          subjectId: post.id,
          summary: `Edited the post “${excerptOf(held.text)}”, waiting for approval`,
          ...changes,
        });
      }
      if (!pending) await this.approvals.hold(m, auth, { postId: post.id, text: held.text, step: 'submitted' });
      return null;
    }
    const { jobs } = await this.writeJobs(m, { ...content, draftTargets }, scheduledAt, publishBy, now);
    await this.audit.record(m, auth, {
      kind: 'post',
      action: 'schedule',
      subjectId: post.id,
      summary: `Scheduled the draft “${excerptOf(content.text)}” for ${plural(jobs.length, 'account')}`,
      before: { scheduledAt: null },
      after: { ...postFields({ ...content, scheduledAt, publishBy }), accounts: jobs.map((j) => j.accountId) },
    });
    return jobs.some((j) => j.status === 'scheduled') ? scheduledAt : null;
  }

  /** The platform checks of a held post's targets, as scheduling would run them (nothing written). */
  private checkHeld(
    built: BuiltJobs,
    content: PostRow,
    mediaInfo: MediaInfo[],
    thread: { thread: ThreadPart[] | null; media: MediaInfo[][] },
  ): void {
    this.checkPlatforms(
      built.checks.map((c) => ({ ...c, text: c.text ?? content.text })),
      mediaInfo,
      content.link,
      thread,
    );
  }

  /**
   * A held post (a draft, or a post waiting for approval) scheduled: its jobs checked and written in
   * the statement that clears its draft targets and approval state (PostsRepository.scheduleDraft),
   * in `m`. A 409 when it was no longer held. The caller wakes workers after the commit
   * (`jobsAdded`) when a job is due to run.
   */
  async writeJobs(
    m: Sql,
    content: PostRow,
    scheduledAt: Date,
    publishBy: Date | null,
    now = new Date(),
  ): Promise<{ jobs: NewJob[]; wake: Date | null }> {
    const workspaceId = content.workspaceId;
    const { jobs, mastodon } = await this.checkSchedulable(content);
    jobs.sort((a, b) => (a.id < b.id ? -1 : 1));
    const next: ScheduledPostRow = { ...content, scheduledAt, publishBy, draftTargets: null, approval: null };
    const enqueue = this.lifecycle.enqueue({ workspaceId, postId: content.id, runAt: scheduledAt, publishBy, createdAt: now, jobs }, (j) =>
      this.payload(next, j.textOverride, mastodon.get(j.id)),
    );
    if (!(await this.posts.scheduleDraft(m, next, enqueue))) throw conflict('this post was scheduled meanwhile');
    // post.scheduled (a draft scheduled, a post approved), committed with its jobs (docs/events.md).
    await this.events.postScheduled(m, { workspaceId, postId: content.id, scheduledAt, publishBy, targets: scheduledTargets(jobs), now });
    return { jobs, wake: jobs.some((j) => j.status === 'scheduled') ? scheduledAt : null };
  }

  /**
   * A held post checked as scheduling it would check it (its accounts still the workspace's, the
   * platform limits); nothing is written. The jobs it would get.
   */
  async checkSchedulable(content: PostRow): Promise<BuiltJobs> {
    const workspaceId = content.workspaceId;
    const mediaInfo = await this.resolveMedia(workspaceId, content.media);
    const thread = await this.resolveThread(workspaceId, content.thread?.map((p) => ({ ...p, link: p.link ?? undefined })) ?? null);
    const built = await this.buildJobs(workspaceId, content.draftTargets ?? []);
    this.checkHeld(built, content, mediaInfo, thread);
    return built;
  }

  /** Wakes workers for jobs written by `writeJobs`, after their commit. */
  jobsAdded(at: Date): void {
    this.lifecycle.jobsAdded(at);
  }

  /** A post with its jobs read in `m` (under the caller's locks), as the API shows it. */
  async viewIn(m: Sql, workspaceId: string, id: string): Promise<{ post: PostRow; view: PostView } | null> {
    const post = await this.posts.find(workspaceId, id, m);
    if (!post) return null;
    const slots = await this.queue.slotsOfPosts(workspaceId, [id], m);
    return { post, view: this.toView(post, await this.reads.jobsOfPosts(workspaceId, [id], m), slots.get(id) ?? null) };
  }

  /**
   * The posting queue's part of editing a scheduled post: `queue: true` gives its slots back and
   * takes the next free one (the post's new time); another time given gives them back (the same
   * time keeps them). Returns the post's time.
   */
  private async queueOnEdit(
    m: Sql,
    workspaceId: string,
    post: PostRow,
    dto: UpdatePostDto,
    at: Date,
    publishBy: Date | null,
    now: Date,
    accountIds: string[],
  ): Promise<Date> {
    if (dto.queue) {
      await this.queue.release(m, workspaceId, post.id);
      return (await this.queue.takeNext(m, workspaceId, post.id, accountIds, now, publishBy)).at;
    }
    if (at.getTime() !== post.scheduledAt?.getTime()) await this.queue.release(m, workspaceId, post.id);
    return at;
  }

  /** Cancels the post's waiting jobs; a draft (which has none) is deleted, and the answer is its last state, cancelled. */
  async cancel(auth: AuthContext, id: string): Promise<PostView> {
    const workspaceId = auth.workspaceId;
    let deletedDraft: PostView | null = null;
    await this.posts.transaction(async (m) => {
      await this.lifecycle.lockPostJobs(m, workspaceId, id);
      const post = await this.posts.find(workspaceId, id, m, true);
      if (!post) throw notFound('post', id);
      if (post.draftTargets !== null) {
        await this.posts.deleteDraft(m, workspaceId, id);
        deletedDraft = { ...this.toView(post, [], null), status: 'cancelled' };
        const what = { pending: 'post waiting for approval', expired: 'expired post', none: 'draft' }[post.approval ?? 'none'];
        await this.audit.record(m, auth, {
          kind: 'post',
          action: 'cancel',
          subjectId: id,
          summary: `Deleted the ${what} “${excerptOf(post.text)}”`,
        });
        return;
      }
      await this.lifecycle.cancelPost(m, workspaceId, id);
      // A cancelled post's queue slots are free for the next queued post.
      await this.queue.release(m, workspaceId, id);
      await this.audit.record(m, auth, {
        kind: 'post',
        action: 'cancel',
        subjectId: id,
        summary: `Cancelled the post “${excerptOf(post.text)}”`,
      });
    });
    return deletedDraft ?? this.get(workspaceId, id);
  }
}

/** The targets of a post's waiting jobs, as a held post keeps them (its accounts, each one's own text and Mastodon settings). */
function targetsOfJobs(jobs: readonly JobRow[]): DraftTarget[] {
  return jobs.map((j) => ({
    accountId: j.accountId,
    ...(j.textOverride !== null ? { text: j.textOverride } : {}),
    ...(j.payload.mastodon?.visibility ? { visibility: j.payload.mastodon.visibility } : {}),
    ...(j.payload.mastodon?.spoilerText ? { spoilerText: j.payload.mastodon.spoilerText } : {}),
  }));
}

/** `queue: true` takes its time from the posting queue: a time given as well is a contradiction. */
function checkQueueOrTime(dto: { queue?: boolean; scheduledAt?: string }): void {
  if (dto.queue && dto.scheduledAt !== undefined) {
    throw invalidInput('queue and scheduledAt conflict: queue: true takes the next free queue slot as the time; send one or the other');
  }
}

/** The reason the approval table gives for refusing `op` from `state`. */
function refusal(state: Exclude<ApprovalState, 'deleted'>, op: ApprovalOperation): string {
  const outcome = approvalTransition(state, op, { approvalRequired: false, deadlinePassed: false });
  return outcome.ok ? `cannot ${op} this post` : outcome.reason;
}

/** A request's targets as a post keeps them: the account id in lower case, the text override only when given. */
function draftTargetsOf(targets: readonly DraftTarget[]): DraftTarget[] {
  return targets.map((t) => ({
    accountId: t.accountId.toLowerCase(),
    ...(t.text !== undefined ? { text: t.text } : {}),
    ...(t.visibility !== undefined ? { visibility: t.visibility } : {}),
    ...(t.spoilerText !== undefined ? { spoilerText: t.spoilerText } : {}),
  }));
}

/** A Mastodon target's settings as its job keeps them; undefined when it sets none. */
function mastodonOptionsOf(t: DraftTarget): MastodonOptions | undefined {
  if (t.visibility === undefined && t.spoilerText === undefined) return undefined;
  return { visibility: t.visibility ?? null, spoilerText: t.spoilerText ?? null };
}

/** A target as the platform checks see it: its account's platform and config, its text, a Mastodon target's settings. */
interface CheckedTarget {
  label: string;
  provider: Provider;
  config: Record<string, unknown> | null;
  text: string;
  mastodon: MastodonOptions | null | undefined;
}

/** New jobs, what the platform checks need of each, and the Mastodon settings by job id. */
export interface BuiltJobs {
  jobs: NewJob[];
  checks: (Omit<CheckedTarget, 'text'> & { text: string | null })[];
  mastodon: Map<string, MastodonOptions>;
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
    scheduledAt: p.scheduledAt?.toISOString() ?? null,
    publishBy: p.publishBy?.toISOString() ?? null,
  };
}

function excerptOf(text: string): string {
  const chars = [...text.replace(/\s+/g, ' ').trim()];
  return chars.length > 60 ? `${chars.slice(0, 60).join('')}…` : chars.join('');
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A post's new jobs as post.scheduled names them. */
function scheduledTargets(jobs: NewJob[]): ScheduledTarget[] {
  return jobs.map((j) => ({ jobId: j.id, accountId: j.accountId, provider: j.provider, status: j.status }));
}
