import { Inject, Injectable, Logger } from '@nestjs/common';
import { openCredentials, sealCredentials } from '../accounts/account-credentials';
import { SecretBox } from '../common/crypto/secret-box';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { bareOutcome, DeliveryAccount, DeliveryOutcome, PayloadMedia } from '../connectors/connector.interface';
import { ConnectorRegistry } from '../connectors/connector.registry';
import { MediaResolver } from '../media/media-resolver';
import { RetryPolicy } from '../retry/backoff';
import { decideAfterAttempt, isExpired } from '../retry/decide';
import { ClaimedJob, FinishedAttempt, QueueRepository } from './queue.repository';
import { WorkerMetrics } from './worker.metrics';

interface CachedAccount {
  version: number;
  account: DeliveryAccount;
}

const outcome = (errorClass: DeliveryOutcome['errorClass'], message: string): DeliveryOutcome => bareOutcome(errorClass, message);

/**
 * One attempt of one claimed job: the account's decrypted credentials (cached per account and
 * credentials version), the post's media, the platform's connector, then the pure retry
 * decision. Returns the finished attempt for the worker to record; never throws.
 */
@Injectable()
export class AttemptRunner {
  private readonly logger = new Logger('Attempts');
  private readonly accounts = new Map<string, CachedAccount>();

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly queue: QueueRepository,
    private readonly connectors: ConnectorRegistry,
    private readonly box: SecretBox,
    private readonly metrics: WorkerMetrics,
    private readonly media: MediaResolver,
  ) {}

  /** Decrypted credentials are cached per account and version (bumped on every change). */
  async ensureAccounts(jobs: ClaimedJob[]): Promise<void> {
    const missing = [
      ...new Set(jobs.filter((j) => this.accounts.get(j.accountId)?.version !== j.credentialsVersion).map((j) => j.accountId)),
    ];
    if (missing.length === 0) return;
    for (const row of await this.queue.loadAccounts(missing)) {
      try {
        this.accounts.set(row.id, {
          version: row.credentialsVersion,
          account: {
            id: row.id,
            workspaceId: row.workspaceId,
            name: row.name,
            config: row.config,
            credentials: openCredentials(this.box, row.id, row.credentials),
          },
        });
      } catch (err) {
        this.accounts.delete(row.id);
        this.logger.error(`account ${row.id}: ${(err as Error).message}`);
      }
    }
  }

  private policyFor(job: ClaimedJob): RetryPolicy {
    const p = job.retryPolicy ?? {};
    return {
      baseDelayMs: p.baseDelayMs ?? this.config.retry.baseDelayMs,
      maxDelayMs: p.maxDelayMs ?? this.config.retry.maxDelayMs,
      maxAttempts: p.maxAttempts ?? this.config.retry.maxAttempts,
      maxServerDelayMs: this.config.retry.maxServerDelayMs,
    };
  }

  private async deliver(job: ClaimedJob, signal: AbortSignal): Promise<DeliveryOutcome> {
    const connector = this.connectors.find(job.provider);
    if (!connector) return outcome('poison', `no connector for provider "${job.provider}" in this version of Herald`);
    const cached = this.accounts.get(job.accountId);
    if (!cached) {
      // Wrong HERALD_SECRET_KEY on this host: another host (or a fixed config) can still deliver.
      return outcome('transient', 'the account\'s credentials could not be decrypted on this host (check HERALD_SECRET_KEY)');
    }
    let media: PayloadMedia[];
    try {
      media = await this.media.resolve(job.workspaceId, job.payload.media, new Date());
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
    const result =
      job.publishBy && isExpired(job.publishBy, startedAt)
        ? outcome('permanent', 'publishBy passed before the attempt could start')
        : await this.deliver(job, signal);
    const finishedAt = new Date();
    if (result.credentialsUpdate) await this.storeCredentials(job.accountId, result.credentialsUpdate);
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
      warnings: result.warnings ?? [],
    };
  }

  private async storeCredentials(accountId: string, credentials: Record<string, unknown>): Promise<void> {
    try {
      await this.queue.updateCredentials(accountId, sealCredentials(this.box, accountId, credentials));
      this.accounts.delete(accountId);
    } catch (err) {
      this.logger.error(`could not store refreshed credentials of account ${accountId}: ${(err as Error).message}`);
    }
  }
}
