import { Inject, Injectable, Logger } from '@nestjs/common';
import { openCredentials, sealCredentials } from '../accounts/account-credentials';
import { AccountsService } from '../accounts/accounts.service';
import { SecretBox } from '../common/crypto/secret-box';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { bareOutcome, DeliveryAccount, DeliveryOutcome, PayloadMedia, payloadParts } from '../connectors/connector.interface';
import { ConnectorRegistry } from '../connectors/connector.registry';
import { MediaResolver } from '../media/media-resolver';
import { RetryPolicy } from '../retry/backoff';
import { decideAfterAttempt } from '../retry/decide';
import { CredentialsCache } from './credentials-cache';
import type { ClaimedJob, FinishedAttempt } from '../queue/queue.types';
import { WorkerMetrics } from './worker.metrics';

const outcome = (errorClass: DeliveryOutcome['errorClass'], message: string): DeliveryOutcome => bareOutcome(errorClass, message);

/**
 * One attempt of one claimed job: the account's decrypted credentials (CredentialsCache), the
 * post's media, the platform's connector under the attempt's deadline (`signal`), then the pure
 * retry decision. Returns the finished attempt for the worker to record in its next round —
 * refreshed credentials included, sealed, so they are stored in the same transaction as the
 * outcome and only if nobody saved newer ones meanwhile. Never throws.
 */
@Injectable()
export class AttemptRunner {
  private readonly logger = new Logger('Attempts');
  private readonly cache = new CredentialsCache();

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly accounts: AccountsService,
    private readonly connectors: ConnectorRegistry,
    private readonly box: SecretBox,
    private readonly metrics: WorkerMetrics,
    private readonly media: MediaResolver,
  ) {}

  /**
   * Loads and decrypts the credentials of the claimed jobs' accounts not cached at their version.
   * Throws when the database cannot be read (the caller gives the jobs back unattempted).
   */
  async ensureAccounts(jobs: ClaimedJob[]): Promise<void> {
    const missing = [
      ...new Set(jobs.filter((j) => this.cache.get(j.accountId, j.credentialsVersion) === undefined).map((j) => j.accountId)),
    ];
    if (missing.length === 0) return;
    for (const row of await this.accounts.forDelivery(missing)) {
      try {
        const credentials = openCredentials(this.box, row.id, row.credentials);
        this.cache.set(row.id, row.credentialsVersion, {
          id: row.id,
          workspaceId: row.workspaceId,
          name: row.name,
          config: row.config,
          credentials,
        });
      } catch (err) {
        this.cache.forget(row.id);
        this.logger.error(`account ${row.id}: ${(err as Error).message}`);
      }
    }
  }

  /**
   * The job's account at its claimed credentials version or newer: from the cache, else read
   * again (evicted meanwhile). Undefined when they cannot be read or decrypted on this host.
   */
  private async credentials(job: ClaimedJob): Promise<{ version: number; account: DeliveryAccount } | undefined> {
    const hit = this.cache.get(job.accountId, job.credentialsVersion);
    if (hit) return hit;
    try {
      await this.ensureAccounts([job]);
    } catch (err) {
      this.logger.error(`account ${job.accountId}: could not be read (${(err as Error).message})`);
      return undefined;
    }
    return this.cache.get(job.accountId, job.credentialsVersion);
  }

  /** The account stopped (disabled, deleted): its decrypted credentials leave memory. */
  forget(accountId: string): void {
    this.cache.forget(accountId);
  }

  private policyFor(job: ClaimedJob): RetryPolicy {
    const p = job.retryPolicy ?? {};
    return {
      baseDelayMs: p.baseDelayMs ?? this.config.retry.baseDelayMs,
      maxDelayMs: p.maxDelayMs ?? this.config.retry.maxDelayMs,
      maxAttempts: p.maxAttempts ?? this.config.retry.maxAttempts,
      maxServerDelayMs: this.config.retry.maxServerDelayMs,
      jitter: this.config.retry.jitter,
    };
  }

  private async deliver(job: ClaimedJob, cached: { account: DeliveryAccount } | undefined, signal: AbortSignal): Promise<DeliveryOutcome> {
    const connector = this.connectors.find(job.provider);
    if (!connector) return outcome('poison', `no connector for provider "${job.provider}" in this version of Herald`);
    if (!cached) {
      // Wrong HERALD_SECRET_KEY on this host: another host (or a fixed config) can still deliver.
      return outcome('transient', "the account's credentials could not be decrypted on this host (check HERALD_SECRET_KEY)");
    }
    let media: PayloadMedia[];
    try {
      // Every part's media (a thread's included), each id once: connectors look them up by id.
      const ids = [...new Set(payloadParts(job.payload).flatMap((part) => part.media))];
      media = await this.media.resolve(job.workspaceId, ids, new Date());
    } catch (err) {
      return outcome('transient', `the post's media could not be read: ${(err as Error).message}`);
    }
    try {
      return await connector.deliver(
        {
          id: job.id,
          postId: job.postId,
          accountId: job.accountId,
          workspaceId: job.workspaceId,
          idempotencyKey: job.idempotencyKey,
          attemptNumber: job.attemptNumber,
          payload: job.payload,
          media,
          published: job.published ?? [],
          previousAttempt: job.previousErrorClass
            ? { errorClass: job.previousErrorClass, networkError: job.previousNetworkError, httpStatus: job.previousHttpStatus }
            : null,
        },
        cached.account,
        signal,
      );
    } catch (err) {
      // Connectors turn every platform or network failure into an outcome; an exception is a
      // bug on our side. Retried (bounded by the attempt budget), and said plainly.
      this.logger.error(`connector ${job.provider} threw on job ${job.id}: ${(err as Error).stack ?? String(err)}`);
      return outcome('transient', `internal error in the ${job.provider} connector: ${(err as Error).message}`);
    }
  }

  async run(job: ClaimedJob, signal: AbortSignal): Promise<FinishedAttempt> {
    const startedAt = new Date();
    const cached = await this.credentials(job);
    const result = await this.deliver(job, cached, signal);
    const finishedAt = new Date();
    let refreshedCredentials: string | null = null;
    if (result.credentialsUpdate) {
      refreshedCredentials = sealCredentials(this.box, job.accountId, result.credentialsUpdate);
      // The account's next jobs, maybe already waiting in this process, use the refreshed
      // session or token (the old one may be spent); which version is stored is decided by the
      // round (a person's save wins), and the next claim carries it.
      if (cached) this.cache.refreshed(job.accountId, cached.version, result.credentialsUpdate);
    }
    const decision = decideAfterAttempt({
      errorClass: result.errorClass,
      attemptNumber: job.attemptsInBudget + 1,
      policy: this.policyFor(job),
      serverDelayMs: result.serverDelayMs,
      publishBy: job.publishBy,
      now: finishedAt,
      random: Math.random,
    });
    this.metrics.deliveries.inc({ provider: job.provider, class: result.errorClass });
    this.metrics.attemptSeconds.observe({ provider: job.provider }, (finishedAt.getTime() - startedAt.getTime()) / 1000);
    return {
      jobId: job.id,
      accountId: job.accountId,
      attemptNumber: job.attemptNumber,
      idempotencyKey: job.idempotencyKey,
      startedAt,
      finishedAt,
      httpStatus: result.httpStatus,
      networkError: result.networkError,
      errorClass: result.errorClass,
      message: result.message,
      responseExcerpt: result.responseExcerpt,
      decision: decision.decision,
      delayMs: decision.delayMs,
      deadReason: decision.deadReason,
      remoteId: result.remoteId,
      remoteUrl: result.remoteUrl,
      parts: result.parts ?? null,
      warnings: result.warnings ?? [],
      credentialsVersion: cached?.version ?? job.credentialsVersion,
      refreshedCredentials,
    };
  }
}
