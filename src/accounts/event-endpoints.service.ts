import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { AuthContext } from '../access/auth-context';
import { AuditService } from '../audit/audit.service';
import { SecretBox } from '../common/crypto/secret-box';
import { invalidInput, notFound } from '../common/errors';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { ConnectorInputError, PreparedAccount } from '../connectors/connector.interface';
import { ConnectorRegistry } from '../connectors/connector.registry';
import { AccountStateService } from '../account-state/account-state.service';
import { JobLifecycle } from '../queue/job-lifecycle.service';
import type { EventType } from '../vocabulary/vocabulary';
import { openCredentials, sealCredentials } from './account-credentials';
import type { AccountRow } from './account.types';
import { AccountsRepository } from './accounts.repository';
import { EventEndpointsRepository } from './event-endpoints.repository';

/** At most this many event endpoints per workspace: each is an account the worker serves. */
export const MAX_EVENT_ENDPOINTS = 20;

/** An event endpoint as the API and the page show it (docs/events.md): never its secret or header values. */
export interface EventEndpointView {
  id: string;
  url: string;
  events: EventType[];
  description: string | null;
  /** The names of the custom headers sent with each delivery (their values are write-only). */
  headerNames: string[];
  /** `active`; `needs_reauth` (the endpoint answered 401/403: fix it, then resume); `disabled` (paused by a person, or after 50 failures in a row). */
  status: AccountRow['status'];
  statusReason: string | null;
  paused: boolean;
  circuit: { state: AccountRow['circuitState']; openUntil: string | null; consecutiveFailures: number };
  lastError: string | null;
  lastSuccessAt: string | null;
  createdAt: string;
}

export type EventEndpointWithSecret = EventEndpointView & { secret?: string };

export interface NewEventEndpoint {
  url: string;
  headers?: Record<string, string>;
  events: EventType[];
  description?: string | null;
}

export interface EventEndpointChanges {
  url?: string;
  headers?: Record<string, string>;
  events?: EventType[];
  description?: string | null;
  paused?: boolean;
}

/**
 * Event endpoints (docs/events.md): each is an account of its own with `purpose = 'events'` and
 * provider `webhook`, so its deliveries run through the engine like a blog webhook's (its own
 * circuit breaker, in-flight cap, retries, signature, dead-letter handling) and never share them
 * with an account that publishes. Its URL is checked by the webhook connector exactly as a
 * webhook account's (the SSRF guard, the https rules, header rules), and it has a signing secret
 * shown once. Writes go through AccountStateService (the accounts table's writer), jobs first.
 */
@Injectable()
export class EventEndpointsService {
  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly endpoints: EventEndpointsRepository,
    private readonly accounts: AccountsRepository,
    private readonly connectors: ConnectorRegistry,
    private readonly box: SecretBox,
    private readonly jobs: JobLifecycle,
    private readonly state: AccountStateService,
    private readonly audit: AuditService,
  ) {}

  private async prepare(
    input: { url: string; headers?: Record<string, string> },
    previous: Record<string, unknown> | null,
    previousConfig: Record<string, unknown> | null,
  ): Promise<PreparedAccount> {
    try {
      return await this.connectors
        .require('webhook')
        .prepareAccount(
          input.headers === undefined ? { url: input.url } : { url: input.url, headers: input.headers },
          previous,
          previousConfig,
        );
    } catch (err) {
      // The connector names config.url / config.headers; the subscription's fields are url and headers.
      if (err instanceof ConnectorInputError)
        throw invalidInput(err.message.replace(/^config\./, '').replace(/config\.(url|headers)/g, '$1'));
      throw err;
    }
  }

  async create(auth: AuthContext, input: NewEventEndpoint): Promise<EventEndpointWithSecret> {
    const prepared = await this.prepare(input, null, null);
    const id = randomUUID();
    const config = { ...prepared.config, events: input.events, description: input.description ?? null };
    const row = await this.accounts.transaction(async (m) => {
      if ((await this.endpoints.count(auth.workspaceId, m)) >= MAX_EVENT_ENDPOINTS) {
        throw invalidInput(`a workspace has at most ${MAX_EVENT_ENDPOINTS} event subscriptions: delete one first`);
      }
      await this.state.create(m, {
        id,
        workspaceId: auth.workspaceId,
        provider: 'webhook',
        name: endpointName(String(prepared.config.url)),
        config,
        credentials: sealCredentials(this.box, id, prepared.credentials),
        retryPolicy: null,
        maxInFlight: this.config.worker.maxInFlightPerAccount,
        purpose: 'events',
      });
      const created = (await this.endpoints.find(auth.workspaceId, id, m))!;
      await this.audit.record(m, auth, {
        kind: 'account',
        action: 'create_event_subscription',
        subjectId: id,
        summary: `Subscribed ${created.config.url as string} to ${input.events.join(', ')}`,
        after: { ...auditFields(created), secret: '(set)' },
      });
      return created;
    });
    return { ...toEventEndpointView(row), ...prepared.revealOnce };
  }

  async list(workspaceId: string): Promise<EventEndpointView[]> {
    return (await this.endpoints.list(workspaceId)).map(toEventEndpointView);
  }

  async get(workspaceId: string, id: string): Promise<EventEndpointView> {
    return toEventEndpointView(await this.load(workspaceId, id));
  }

  private async load(workspaceId: string, id: string): Promise<AccountRow> {
    const row = await this.endpoints.find(workspaceId, id);
    if (!row) throw notFound('event subscription', id);
    return row;
  }

  /**
   * A change of URL, headers, events, description, or `paused`. A URL on another origin drops the
   * stored headers unless given again and gets a new secret, shown once (as a webhook account's).
   * `paused: true` stops deliveries (waiting ones wait, paused); `paused: false`, or a new URL for
   * an endpoint that needed one, makes it active again: its circuit closes and its deliveries resume.
   */
  async update(auth: AuthContext, id: string, changes: EventEndpointChanges): Promise<EventEndpointWithSecret> {
    const workspaceId = auth.workspaceId;
    const current = await this.load(workspaceId, id);
    if (changes.headers !== undefined && changes.url === undefined) {
      throw invalidInput('headers: give url with them (the headers belong to the address they are sent to)');
    }
    const prepared =
      changes.url !== undefined
        ? await this.prepare(
            { url: changes.url, headers: changes.headers },
            openCredentials(this.box, id, current.credentials),
            current.config,
          )
        : null;
    const config = {
      ...current.config,
      ...(prepared?.config ?? {}),
      ...(changes.events !== undefined ? { events: changes.events } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
    };
    await this.accounts.transaction(async (m) => {
      if (changes.paused === true) {
        if (current.status !== 'disabled') {
          await this.jobs.pauseAccount(m, id);
          await this.state.disable(m, workspaceId, id, 'paused by a person');
          await this.jobs.accountStopped(id, m);
        }
      } else if ((prepared || changes.paused === false) && current.status !== 'active') {
        await this.jobs.resumeAccount(m, id);
        await this.state.reactivate(m, workspaceId, id);
      }
      await this.state.edit(m, workspaceId, id, {
        name: prepared ? endpointName(String(prepared.config.url)) : undefined,
        config,
        credentials: prepared ? sealCredentials(this.box, id, prepared.credentials) : undefined,
      });
      const after = (await this.endpoints.find(workspaceId, id, m))!;
      await this.audit.record(m, auth, {
        kind: 'account',
        action: 'update_event_subscription',
        subjectId: id,
        summary: `Changed the event subscription of ${after.config.url as string}`,
        before: auditFields(current),
        after: auditFields(after),
      });
    });
    return { ...(await this.get(workspaceId, id)), ...prepared?.revealOnce };
  }

  /** Deleted: its waiting deliveries are cancelled (kept, as cancelled, with their history). */
  async remove(auth: AuthContext, id: string): Promise<void> {
    const workspaceId = auth.workspaceId;
    const current = await this.load(workspaceId, id);
    await this.accounts.transaction(async (m) => {
      await this.jobs.cancelAccount(m, workspaceId, id);
      if (!(await this.state.softDelete(m, workspaceId, id))) throw notFound('event subscription', id);
      await this.jobs.accountStopped(id, m);
      await this.audit.record(m, auth, {
        kind: 'account',
        action: 'remove_event_subscription',
        subjectId: id,
        summary: `Removed the event subscription of ${current.config.url as string}; its waiting deliveries were cancelled`,
        before: auditFields(current),
      });
    });
  }

  async rotateSecret(auth: AuthContext, id: string): Promise<EventEndpointWithSecret> {
    const workspaceId = auth.workspaceId;
    const row = await this.load(workspaceId, id);
    const prepared = this.connectors.require('webhook').rotateSecret!(openCredentials(this.box, id, row.credentials));
    await this.accounts.transaction(async (m) => {
      await this.state.edit(m, workspaceId, id, { credentials: sealCredentials(this.box, id, prepared.credentials) });
      await this.audit.record(m, auth, {
        kind: 'account',
        action: 'rotate_secret',
        subjectId: id,
        summary: `Rotated the signing secret of the event subscription of ${row.config.url as string}`,
        before: { secret: '(secret)' },
        after: { secret: '(changed)' },
      });
    });
    return { ...(await this.get(workspaceId, id)), ...prepared.revealOnce };
  }
}

/** The account's name, clearly an event endpoint wherever an account's name is shown (an alert mail). */
function endpointName(url: string): string {
  return `Event endpoint ${new URL(url).host}`.slice(0, 200);
}

export function toEventEndpointView(a: AccountRow): EventEndpointView {
  const c = a.config;
  return {
    id: a.id,
    url: typeof c.url === 'string' ? c.url : '',
    events: Array.isArray(c.events) ? (c.events as EventType[]) : [],
    description: typeof c.description === 'string' ? c.description : null,
    headerNames: Array.isArray(c.headerNames) ? (c.headerNames as string[]) : [],
    status: a.status,
    statusReason: a.statusReason,
    paused: a.status === 'disabled',
    circuit: { state: a.circuitState, openUntil: a.circuitOpenUntil?.toISOString() ?? null, consecutiveFailures: a.consecutiveFailures },
    lastError: a.lastError,
    lastSuccessAt: a.lastSuccessAt?.toISOString() ?? null,
    createdAt: a.createdAt.toISOString(),
  };
}

function auditFields(a: AccountRow): Record<string, unknown> {
  return { url: a.config.url, events: a.config.events, description: a.config.description ?? null, status: a.status };
}
