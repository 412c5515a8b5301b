import { Injectable } from '@nestjs/common';
import type { Sql } from '../database/db';
import { conflict, invalidInput, notFound } from '../common/errors';
import { parseInstant } from '../common/instant';
import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor, Page } from '../common/pagination';
import type { JobPayload, Provider } from '../connectors/connector.interface';
import { toAttemptView } from '../jobs/job.types';
import { JobsService, JobWithAttempts, WHY_NOT_RETRYABLE } from '../jobs/jobs.service';
import { MediaService } from '../media/media.service';
import { limitsFor, validateForPlatform, validateThreadForPlatform } from '../posts/platform-rules';
import { JobLifecycle, LockedJob, RevivedJob } from '../queue/job-lifecycle.service';
import { JobReads } from '../queue/job-reads.service';
import type { DlqFilter } from '../queue/job-reads.types';
import { AccountStateService } from '../account-state/account-state.service';
import { AccountsService } from '../accounts/accounts.service';
import { AuditService } from '../audit/audit.service';
import type { AuthContext } from '../workspaces/auth';
import type { BulkRequeueDto, DlqFilterDto, EditDeadJobDto, ListDlqQuery, RequeueDto } from './dead-letter.dto';
import { DeadLetterMetrics } from './dead-letter.metrics';
import { DlqDetailView, DlqEntryView, NewAudit, toAuditEntry, toAuditView, toDlqEntryView } from './dead-letter.types';
import { applyEdit } from './payload-edit';
import { notDeadMessage, requeueTarget } from './requeue-policy';

/** A bulk requeue by filter takes at most this many jobs per call (the answer says if more match). */
export const MAX_BULK_FILTER = 10_000;

export interface SkippedJob {
  id: string;
  reason: 'not_dead' | 'account_not_active' | 'account_deleted';
  message: string;
}

export interface BulkRequeueResult {
  requeued: number;
  ids: string[];
  skipped: SkippedJob[];
  /** By filter: more dead jobs matched than one call takes; call again. */
  more: boolean;
}

/**
 * The dead-letter queue: a person sees why a job failed, corrects its payload, and sends it
 * again (or discards it). Every change is one transaction that locks the job rows, then their
 * accounts, and is guarded by `status = 'dead'`, so concurrent requeues, retries and the worker
 * can never put one job in the queue twice. Every change is written to the audit trail with
 * who made it (an API key or a person), in the same transaction.
 */
@Injectable()
export class DeadLetterService {
  constructor(
    private readonly reads: JobReads,
    private readonly jobs: JobsService,
    private readonly media: MediaService,
    private readonly lifecycle: JobLifecycle,
    private readonly accounts: AccountStateService,
    private readonly metrics: DeadLetterMetrics,
    private readonly audit: AuditService,
    private readonly accountSettings: AccountsService,
  ) {}

  async list(workspaceId: string, query: ListDlqQuery): Promise<Page<DlqEntryView>> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const statuses =
      query.includeDiscarded === true
        ? (['dead', 'discarded'] as const)
        : query.status === 'discarded'
          ? (['discarded'] as const)
          : (['dead'] as const);
    const rows = await this.reads.deadJobs(workspaceId, [...statuses], this.filter(query), decodeCursor(query.cursor), limit);
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const last = page[page.length - 1];
    return {
      data: page.map(toDlqEntryView),
      nextCursor: more && last?.deadAtMicros ? encodeCursor({ micros: last.deadAtMicros, id: last.id }) : null,
    };
  }

  /** Any job of the workspace (the view says its status): a requeued job's page stays readable. */
  async get(workspaceId: string, id: string): Promise<DlqDetailView> {
    const row = await this.reads.deadJob(workspaceId, id);
    if (!row) throw notFound('job', id);
    const [attempts, audit] = await Promise.all([this.jobs.attempts(id), this.audit.forSubject(workspaceId, id)]);
    return {
      ...toDlqEntryView(row),
      payload: row.payload,
      publishBy: row.publishBy?.toISOString() ?? null,
      requeueIdempotencyKey: row.requeueKey,
      attempts: attempts.map(toAttemptView),
      audit: audit.map(toAuditView),
    };
  }

  /**
   * PATCH /v1/dlq/:jobId: this job's payload only (the post's other jobs keep theirs). The DTO
   * applied POST /v1/posts' field rules; here the same media and platform rules as intake run
   * on the payload as it would be sent. Invalid: 400 and nothing changes.
   */
  async edit(auth: AuthContext, id: string, dto: EditDeadJobDto): Promise<DlqDetailView> {
    await this.lifecycle.transaction(async (m) => {
      const [job] = await this.lifecycle.lockJobs(m, auth.workspaceId, [id]);
      if (!job) throw notFound('job', id);
      if (job.status !== 'dead') throw conflict(`only a dead job's payload can be edited: ${notDeadMessage(job.status)}`);
      const lower = (ids: string[] | undefined) => ids?.map((x) => x.toLowerCase()) ?? ids;
      const { next, before, after } = applyEdit(
        job.payload,
        { ...dto, media: lower(dto.media), thread: dto.thread?.map((p) => ({ ...p, media: lower(p.media) })) },
        job.parts,
      );
      if (Object.keys(after).length === 0) return; // the same payload again: no edit, no new key
      await this.validateContent(auth.workspaceId, job.provider, job.accountId, next);
      await this.lifecycle.editDeadPayload(m, id, next);
      await this.audit.record(m, auth, toAuditEntry({ jobId: id, action: 'edit', before, after }));
    });
    return this.get(auth.workspaceId, id);
  }

  /** The rules of POST /v1/posts for this platform: media known in the workspace, then platform limits, a thread's every part too. */
  private async validateContent(workspaceId: string, provider: Provider, accountId: string, payload: JobPayload): Promise<void> {
    // Unknown media (another workspace's included, as at intake) is a 400 naming it.
    const media = await this.media.requireMany(workspaceId, payload.media);
    const parts = await Promise.all(
      (payload.thread ?? []).map(async (part, i) => ({
        text: part.text,
        link: part.link,
        media: await this.media.requireMany(workspaceId, part.media, `thread.${i}.media`),
      })),
    );
    // The account's own limits (a Mastodon instance's), and a Mastodon job's content warning counted with its text.
    const [account] = await this.accountSettings.findMany(workspaceId, [accountId]);
    const limits = limitsFor(provider, account?.config ?? null);
    const spoilerText = payload.mastodon?.spoilerText ?? null;
    const problems = [
      ...validateForPlatform(provider, { text: payload.text, link: payload.link, media, spoilerText }, limits),
      ...validateThreadForPlatform(
        provider,
        parts.map((p) => ({ ...p, spoilerText })),
        limits,
      ),
    ];
    if (problems.length > 0) throw invalidInput(problems.map((p) => `${provider}: ${p}`).join('; '));
  }

  /** POST /v1/dlq/:jobId/requeue. 409 (nothing changed) when it is not dead or its account cannot take it. */
  async requeue(auth: AuthContext, id: string, dto: RequeueDto): Promise<DlqDetailView> {
    const runAt = dto.runAt ? parseInstant(dto.runAt, 'runAt') : null;
    const done = await this.lifecycle.transaction(async (m) => {
      const [job] = await this.lifecycle.lockJobs(m, auth.workspaceId, [id]);
      if (!job) throw notFound('job', id);
      if (job.status !== 'dead') throw conflict(notDeadMessage(job.status));
      const [account] = await this.accounts.shareLock(m, [job.accountId]);
      const target = requeueTarget(account, dto.force === true);
      if (!target.ok) throw conflict(target.message);
      return this.requeueLocked(m, auth, [job], [{ id, status: target.status }], runAt, dto.force === true);
    });
    this.countRequeued(done);
    return this.get(auth.workspaceId, id);
  }

  /**
   * POST /v1/dlq/requeue: `{ ids }` or `{ filter }`, all in one transaction. A job that is not
   * dead (any more), or whose account cannot take it, is skipped and reported; unknown ids
   * (another workspace's included) are a 400 and nothing changes, as for any id in a body.
   */
  async bulkRequeue(auth: AuthContext, body: BulkRequeueDto): Promise<BulkRequeueResult> {
    // @IsOptional() lets `null` through as if absent: read it so (it reached `null.map`, a 500).
    const dto: BulkRequeueDto = { ...body, ids: body.ids ?? undefined, filter: body.filter ?? undefined };
    if ((dto.ids === undefined) === (dto.filter === undefined)) throw invalidInput('give either ids or filter (exactly one)');
    const runAt = dto.runAt ? parseInstant(dto.runAt, 'runAt') : null;
    const force = dto.force === true;
    const result = await this.lifecycle.transaction(async (m) => {
      const skipped: SkippedJob[] = [];
      let locked: LockedJob[];
      let more = false;
      if (dto.ids !== undefined) {
        const ids = [...new Set(dto.ids.map((x) => x.toLowerCase()))];
        locked = await this.lifecycle.lockJobs(m, auth.workspaceId, ids);
        const known = new Set(locked.map((j) => j.id));
        const unknown = ids.filter((x) => !known.has(x));
        if (unknown.length > 0)
          throw invalidInput(
            `ids: unknown job ${unknown.slice(0, 10).join(', ')}${unknown.length > 10 ? ` and ${unknown.length - 10} more` : ''}`,
          );
      } else {
        const matching = await this.reads.deadIdsMatching(auth.workspaceId, this.filter(dto.filter!), MAX_BULK_FILTER + 1);
        more = matching.length > MAX_BULK_FILTER;
        locked = await this.lifecycle.lockJobs(m, auth.workspaceId, matching.slice(0, MAX_BULK_FILTER), true);
      }
      const dead = locked.filter((j) => {
        if (j.status === 'dead') return true;
        skipped.push({ id: j.id, reason: 'not_dead', message: notDeadMessage(j.status) });
        return false;
      });
      const accounts = new Map(
        (
          await this.accounts.shareLock(
            m,
            dead.map((j) => j.accountId),
          )
        ).map((a) => [a.id, a]),
      );
      const targets: { id: string; status: 'scheduled' | 'paused' }[] = [];
      for (const j of dead) {
        const target = requeueTarget(accounts.get(j.accountId)!, force);
        if (target.ok) targets.push({ id: j.id, status: target.status });
        else skipped.push({ id: j.id, reason: target.reason, message: target.message });
      }
      const requeued = await this.requeueLocked(m, auth, dead, targets, runAt, force);
      return { requeued, skipped, more };
    });
    this.countRequeued(result.requeued);
    return { requeued: result.requeued.length, ids: result.requeued.map((j) => j.id), skipped: result.skipped, more: result.more };
  }

  /** The queue's revive rule (shared with POST /v1/jobs/:id/retry) and the audit rows, inside the caller's transaction. */
  private async requeueLocked(
    m: Sql,
    auth: AuthContext,
    locked: LockedJob[],
    targets: { id: string; status: 'scheduled' | 'paused' }[],
    runAt: Date | null,
    force: boolean,
    via?: 'retry',
  ): Promise<RevivedJob[]> {
    const done = await this.lifecycle.revive(m, targets, runAt);
    const before = new Map(locked.map((j) => [j.id, j]));
    const audit: NewAudit[] = done.map((j) => {
      const b = before.get(j.id)!;
      return {
        jobId: j.id,
        action: 'requeue',
        before: { status: 'dead', idempotencyKey: b.idempotencyKey, publishBy: b.publishBy?.toISOString() ?? null },
        after: {
          status: j.status,
          idempotencyKey: j.idempotencyKey,
          runAt: j.runAt.toISOString(),
          publishBy: j.publishBy?.toISOString() ?? null,
          force,
          ...(via ? { via } : {}),
        },
      };
    });
    await this.audit.record(m, auth, ...audit.map(toAuditEntry));
    return done;
  }

  /**
   * POST /v1/jobs/:id/retry. A job waiting for its next attempt becomes due now. A dead job goes
   * back by the same rule as a requeue from the dead-letter queue (fresh attempt budget, a new
   * idempotency key iff its payload was edited, a passed publishBy dropped: see
   * queue/sql/revive-dead-jobs.ts) and leaves the same audit record, marked `via: "retry"`; if
   * its account is not active it waits, paused, for the account to be fixed (a requeue would ask
   * for `force`). Anything else: 409 saying why.
   */
  async retry(auth: AuthContext, id: string): Promise<JobWithAttempts> {
    const done = await this.lifecycle.transaction(async (m) => {
      const [job] = await this.lifecycle.lockJobs(m, auth.workspaceId, [id]);
      if (!job) throw notFound('job', id);
      if (job.status === 'scheduled') {
        await this.lifecycle.retryNow(m, auth.workspaceId, id);
        return [];
      }
      if (job.status !== 'dead') throw conflict(WHY_NOT_RETRYABLE[job.status]);
      const [account] = await this.accounts.shareLock(m, [job.accountId]);
      const target = requeueTarget(account, true);
      if (!target.ok) throw conflict(target.message);
      return this.requeueLocked(m, auth, [job], [{ id, status: target.status }], null, true, 'retry');
    });
    this.countRequeued(done);
    return this.jobs.get(auth.workspaceId, id);
  }

  /** DELETE /v1/dlq/:jobId: discarded, kept with its history; discarding it again changes nothing. */
  async discard(auth: AuthContext, id: string): Promise<DlqDetailView> {
    const discarded = await this.lifecycle.transaction(async (m) => {
      const [job] = await this.lifecycle.lockJobs(m, auth.workspaceId, [id]);
      if (!job) throw notFound('job', id);
      if (job.status === 'discarded') return null;
      if (job.status !== 'dead') throw conflict(`only a dead job can be discarded: ${notDeadMessage(job.status)}`);
      await this.lifecycle.discard(m, id);
      await this.audit.record(
        m,
        auth,
        toAuditEntry({ jobId: id, action: 'discard', before: { status: 'dead' }, after: { status: 'discarded' } }),
      );
      return job;
    });
    if (discarded) this.metrics.discarded.inc();
    return this.get(auth.workspaceId, id);
  }

  private countRequeued(jobs: RevivedJob[]): void {
    if (jobs.length > 0) this.metrics.requeued.inc(jobs.length);
  }

  private filter(f: DlqFilterDto): DlqFilter {
    return {
      accountId: f.accountId?.toLowerCase(),
      provider: f.provider,
      errorClass: f.errorClass,
      deadReason: f.deadReason,
      from: f.from ? parseInstant(f.from, 'from') : undefined,
      to: f.to ? parseInstant(f.to, 'to') : undefined,
      q: f.q,
    };
  }
}
