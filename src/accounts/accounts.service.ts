import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { AuthContext } from '../access/auth-context';
import { AuditService } from '../audit/audit.service';
import { diffFields } from '../audit/audit.types';
import { canonicalJson } from '../common/canonical-json';
import { SecretBox } from '../common/crypto/secret-box';
import { invalidInput, notFound } from '../common/errors';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, toPage } from '../common/pagination';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import type { EmbeddedRead, SqlPiece } from '../database/statement';
import { LastReadTargets } from './last-read-targets';

export type { PostTargetAccount } from './accounts.repository';
import { ConnectorInputError, PreparedAccount, VerifyResult } from '../connectors/connector.interface';
import { ConnectorRegistry } from '../connectors/connector.registry';
import { AccountStateService } from '../account-state/account-state.service';
import { JobLifecycle } from '../queue/job-lifecycle.service';
import { EventsService } from '../events/events.service';
import { openCredentials, sealCredentials } from './account-credentials';
import type { RetryPolicyOverride } from '../retry/backoff';
import { AccountRow, AccountView, DeliveryAccountRow, toAccountView } from './account.types';
import { AccountsRepository, PostTargetAccount } from './accounts.repository';
import type { CreateAccountDto, RetryPolicyDto, UpdateAccountDto } from './accounts.dto';

export type AccountWithSecret = AccountView & { secret?: string };

@Injectable()
export class AccountsService {
  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly accounts: AccountsRepository,
    private readonly connectors: ConnectorRegistry,
    private readonly box: SecretBox,
    private readonly jobs: JobLifecycle,
    private readonly state: AccountStateService,
    private readonly audit: AuditService,
    private readonly events: EventsService,
  ) {}

  /** The intake's accounts as last read in this process (a guess the post's statement checks). */
  private readonly lastRead = new LastReadTargets();

  private async prepare(
    provider: AccountRow['provider'],
    input: unknown,
    previous: Record<string, unknown> | null,
    previousConfig: Record<string, unknown> | null = null,
  ): Promise<PreparedAccount> {
    const connector = this.connectors.require(provider);
    try {
      return await connector.prepareAccount(input, previous, previousConfig);
    } catch (err) {
      if (err instanceof ConnectorInputError) throw invalidInput(err.message);
      throw err;
    }
  }

  private retryPolicy(dto: RetryPolicyDto | null | undefined): RetryPolicyOverride | null {
    if (!dto) return null;
    const policy: RetryPolicyOverride = {};
    if (dto.baseDelayMs !== undefined) policy.baseDelayMs = dto.baseDelayMs;
    if (dto.maxDelayMs !== undefined) policy.maxDelayMs = dto.maxDelayMs;
    if (dto.maxAttempts !== undefined) policy.maxAttempts = dto.maxAttempts;
    const base = policy.baseDelayMs ?? this.config.retry.baseDelayMs;
    const max = policy.maxDelayMs ?? this.config.retry.maxDelayMs;
    if (max < base) throw invalidInput(`retryPolicy.maxDelayMs (${max}) must be at least retryPolicy.baseDelayMs (${base})`);
    return Object.keys(policy).length ? policy : null;
  }

  async create(auth: AuthContext, dto: CreateAccountDto): Promise<AccountWithSecret> {
    const prepared = await this.prepare(dto.provider, dto.config, null);
    // Without a name, the platform's own (a Mastodon account's display name or handle), when it has one.
    const name = dto.name ?? prepared.suggestedName?.slice(0, 200);
    if (name === undefined || name.trim() === '') throw invalidInput('name is required (a name for the account in Herald)');
    const id = randomUUID();
    const row = await this.accounts.transaction(async (m) => {
      await this.state.create(m, {
        id,
        workspaceId: auth.workspaceId,
        provider: dto.provider,
        name,
        config: prepared.config,
        credentials: sealCredentials(this.box, id, prepared.credentials),
        retryPolicy: this.retryPolicy(dto.retryPolicy),
        maxInFlight: dto.maxInFlight ?? this.config.worker.maxInFlightPerAccount,
      });
      // Read back in the transaction: the row's defaults (status, circuit, times) are the table's.
      const created = (await this.accounts.find(auth.workspaceId, id, m))!;
      await this.audit.record(m, auth, {
        kind: 'account',
        action: 'create',
        subjectId: id,
        summary: `Connected the ${created.provider} account “${created.name}”`,
        after: { ...auditFields(created), credentials: '(set)' },
      });
      return created;
    });
    return { ...this.view(row), ...prepared.revealOnce };
  }

  async get(workspaceId: string, id: string): Promise<AccountView> {
    return this.view(await this.load(workspaceId, id));
  }

  /** An account as the API and the page show it, with its warnings as of now. */
  private view(row: AccountRow): AccountView {
    return toAccountView(row, { now: new Date(), linkedInVersion: this.config.linkedin.apiVersion });
  }

  private async load(workspaceId: string, id: string): Promise<AccountRow> {
    const row = await this.accounts.find(workspaceId, id);
    if (!row) throw notFound('account', id);
    return row;
  }

  /**
   * The workspace's live accounts among `ids` (others, and other workspaces' ids, are absent): a
   * post's targets. `carried`: another module's read to answer in the same statement (the
   * intake's approval mode: database/statement.ts EmbeddedRead).
   */
  async findMany(workspaceId: string, ids: string[], carried: EmbeddedRead | null = null): Promise<PostTargetAccount[]> {
    const rows = await this.accounts.findMany(workspaceId, ids, carried);
    this.lastRead.remember(workspaceId, ids, rows);
    return rows;
  }

  /**
   * The accounts among `ids` as this process last read them (`findMany`), when it has read them
   * all; null otherwise. A guess, never an answer: whoever writes on it puts `stillAsRead` in the
   * same statement, which then writes nothing unless the guess still holds.
   */
  lastReadTargets(workspaceId: string, ids: readonly string[]): PostTargetAccount[] | null {
    return this.lastRead.get(workspaceId, ids);
  }

  /** A boolean piece: the accounts are still as `lastReadTargets` gave them (AccountsRepository.stillAsRead). */
  stillAsRead(workspaceId: string, accounts: readonly PostTargetAccount[]): SqlPiece {
    return this.accounts.stillAsRead(workspaceId, accounts);
  }

  async list(workspaceId: string, limit = DEFAULT_PAGE_SIZE, cursor?: string): Promise<Page<AccountView>> {
    const rows = await this.accounts.list(workspaceId, decodeCursor(cursor), limit);
    return toPage(rows, limit, (r) => this.view(r));
  }

  /**
   * Rules (docs/api.md "Publishing, step by step"): new `config` (credentials re-entered) or `status: "active"` on a
   * `needs_reauth`/`disabled` account makes it active, closes its circuit and resumes its
   * paused jobs; `status: "disabled"` pauses its waiting jobs.
   */
  async update(auth: AuthContext, id: string, dto: UpdateAccountDto): Promise<AccountWithSecret> {
    return (await this.updateCountingResumed(auth, id, dto)).account;
  }

  /**
   * `update`, and how many of the account's paused posts it sent back to the queue (new
   * credentials for an account that needed them): a reconnect tells the person.
   */
  async updateCountingResumed(
    auth: AuthContext,
    id: string,
    dto: UpdateAccountDto,
  ): Promise<{ account: AccountWithSecret; resumed: number }> {
    const workspaceId = auth.workspaceId;
    const current = await this.load(workspaceId, id);
    const prepared =
      dto.config !== undefined
        ? await this.prepare(current.provider, dto.config, openCredentials(this.box, id, current.credentials), current.config)
        : null;
    const retryPolicy = dto.retryPolicy === undefined ? undefined : this.retryPolicy(dto.retryPolicy);
    const resumed = await this.accounts.transaction(async (m) => {
      let resumed = 0;
      // Jobs before the account row, as everywhere (see AccountsRepository).
      if (dto.status === 'disabled') {
        if (current.status !== 'disabled') {
          await this.jobs.pauseAccount(m, id);
          await this.state.disable(m, workspaceId, id, 'disabled by a person');
          await this.jobs.accountStopped(id, m);
        }
      } else if ((prepared || dto.status === 'active') && current.status !== 'active') {
        resumed = await this.jobs.resumeAccount(m, id);
        await this.state.reactivate(m, workspaceId, id);
        // account.recovered, committed with the reactivation (docs/events.md).
        await this.events.accountsRecovered(m, [id]);
      }
      await this.state.edit(m, workspaceId, id, {
        name: dto.name,
        config: prepared?.config,
        credentials: prepared ? sealCredentials(this.box, id, prepared.credentials) : undefined,
        retryPolicy,
        maxInFlight: dto.maxInFlight,
      });
      const after = await this.accounts.find(workspaceId, id, m);
      if (after) {
        const changes = diffFields(
          { ...auditFields(current), credentials: current.credentials },
          { ...auditFields(after), credentials: after.credentials },
          ['credentials'],
        );
        if (Object.keys(changes.after).length > 0) {
          await this.audit.record(m, auth, {
            kind: 'account',
            action: 'update',
            subjectId: id,
            summary: updateSummary(after.name, changes.after),
            ...changes,
          });
        }
      }
      return resumed;
    });
    // A webhook moved to another origin got a new signing secret: shown this once.
    return { account: { ...(await this.get(workspaceId, id)), ...prepared?.revealOnce }, resumed };
  }

  async remove(auth: AuthContext, id: string): Promise<void> {
    const workspaceId = auth.workspaceId;
    const deleted = await this.accounts.transaction(async (m) => {
      const before = await this.accounts.find(workspaceId, id, m);
      await this.jobs.cancelAccount(m, workspaceId, id);
      const found = await this.state.softDelete(m, workspaceId, id);
      if (found) {
        await this.jobs.accountStopped(id, m);
        await this.audit.record(m, auth, {
          kind: 'account',
          action: 'remove',
          subjectId: id,
          summary: `Removed the account “${before?.name ?? id}”; its waiting posts were cancelled`,
          before: before ? auditFields(before) : null,
        });
      }
      return found;
    });
    if (!deleted) throw notFound('account', id);
  }

  /**
   * Checks the credentials against the platform now. What the check read for the account's public
   * config (a Mastodon instance's limits) is stored with it, unless a person saved new settings or
   * credentials meanwhile (then it belonged to the old ones).
   */
  async verify(workspaceId: string, id: string): Promise<VerifyResult> {
    const row = await this.load(workspaceId, id);
    const connector = this.connectors.require(row.provider);
    const result = await connector.verify({
      id: row.id,
      workspaceId: row.workspaceId,
      name: row.name,
      config: row.config,
      credentials: openCredentials(this.box, row.id, row.credentials),
    });
    const update = result.configUpdate;
    if (update && Object.keys(update).length > 0) {
      await this.accounts.transaction(async (m) => {
        const now = await this.accounts.find(workspaceId, id, m);
        if (!now || now.credentialsVersion !== row.credentialsVersion || canonicalJson(now.config) !== canonicalJson(row.config)) return;
        await this.state.edit(m, workspaceId, id, { config: { ...now.config, ...update } });
      });
    }
    const { configUpdate: _stored, ...answer } = result;
    return answer;
  }

  async rotateSecret(auth: AuthContext, id: string): Promise<AccountWithSecret> {
    const workspaceId = auth.workspaceId;
    const row = await this.load(workspaceId, id);
    const connector = this.connectors.require(row.provider);
    if (!connector.rotateSecret) throw invalidInput(`${row.provider} accounts have no signing secret to rotate`);
    const prepared = connector.rotateSecret(openCredentials(this.box, id, row.credentials));
    await this.accounts.transaction(async (m) => {
      await this.state.edit(m, workspaceId, id, { credentials: sealCredentials(this.box, id, prepared.credentials) });
      await this.audit.record(m, auth, {
        kind: 'account',
        action: 'rotate_secret',
        subjectId: id,
        summary: `Rotated the signing secret of “${row.name}”`,
        before: { secret: '(secret)' },
        after: { secret: '(changed)' },
      });
    });
    return { ...(await this.get(workspaceId, id)), ...prepared.revealOnce };
  }

  /** Accounts' settings and sealed credentials for the worker's credentials cache (deleted ones left out). */
  forDelivery(ids: string[]): Promise<DeliveryAccountRow[]> {
    return this.accounts.forDelivery(ids);
  }
}

/** An account's fields for the audit trail: what a person set, never a credential. */
function auditFields(a: AccountRow): Record<string, unknown> {
  return {
    name: a.name,
    provider: a.provider,
    status: a.status,
    config: a.config,
    retryPolicy: a.retryPolicy,
    maxInFlight: a.maxInFlight,
  };
}

function updateSummary(name: string, changed: Record<string, unknown>): string {
  if (changed.status === 'disabled') return `Disabled the account “${name}”`;
  if (changed.status === 'active') return `Enabled the account “${name}”`;
  if ('credentials' in changed) return `Reconnected the account “${name}” with new credentials`;
  return `Changed ${Object.keys(changed).join(', ')} of the account “${name}”`;
}
