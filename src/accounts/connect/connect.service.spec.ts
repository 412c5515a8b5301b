import { createHash } from 'node:crypto';
import type { AuthContext } from '../../access/auth-context';
import type { Role } from '../../access/roles';
import { DomainError } from '../../common/errors';
import { AuthorizeStep, ConnectAccount, OAuthConnect, OAuthConnectError, OAuthGrant } from '../../connectors/oauth-connect.interface';
import { OAuthConnectRegistry } from '../../connectors/oauth-connect.registry';
import type { AccountView } from '../account.types';
import type { AccountsService } from '../accounts.service';
import type { ConnectStateRow, ConnectStatesRepository } from './connect-states.repository';
import { ConnectService, ConnectSession } from './connect.service';

/**
 * What ConnectService decides for every platform, with a platform, a states table and accounts
 * that only record what they are asked (the flows against the real platforms, on the real page:
 * test/settings-linkedin.test.ts, test/settings-bluesky-oauth.test.ts).
 */

const hex = (b: Buffer) => b.toString('hex');

/** account_connect_states as its repository's statements treat it (expiry aside). */
class States {
  readonly rows = new Map<string, ConnectStateRow & { used: boolean }>();
  insert(input: { stateHash: Buffer } & ConnectStateRow): Promise<void> {
    const { stateHash, ...row } = input;
    this.rows.set(hex(stateHash), { ...row, used: false });
    return Promise.resolve();
  }
  consume(stateHash: Buffer, browserHash: Buffer): Promise<ConnectStateRow | null> {
    const row = this.rows.get(hex(stateHash));
    if (!row || row.used || !row.browserHash.equals(browserHash)) return Promise.resolve(null);
    row.used = true;
    return Promise.resolve(row);
  }
  pending(stateHash: Buffer): Promise<boolean> {
    const row = this.rows.get(hex(stateHash));
    return Promise.resolve(row !== undefined && !row.used);
  }
}

/** A platform whose state is the `state` parameter, as LinkedIn's is. */
class FakePlatform implements OAuthConnect {
  readonly provider = 'linkedin' as const;
  readonly label = 'Fake';
  readonly scope = 'a b';
  readonly flowTtlMs = 15 * 60_000;
  completed = 0;
  settled = 0;
  abandoned = 0;
  failure: OAuthConnectError | null = null;
  signedInAs = 'member-1';
  /** What each completed flow got back of what its authorize asked to keep. */
  flowsBack: (string | null)[] = [];

  availability(): { ok: true } {
    return { ok: true };
  }
  authorize(state: string, hint: string | null): Promise<AuthorizeStep> {
    return Promise.resolve({
      url: new URL(`https://platform.example/authorize?state=${state}`),
      ...(hint !== null ? { flow: `flow for ${hint}` } : {}),
    });
  }
  stateOf(params: URLSearchParams): Promise<string | null> {
    return Promise.resolve(params.get('state') || null);
  }
  /** Signs in as `identifier` when one is given (as Bluesky's handle and Mastodon's instance are). */
  signInHint(from: { identifier: string } | { account: ConnectAccount }): string | null {
    return 'identifier' in from && from.identifier !== '' ? from.identifier : null;
  }
  complete(_params: URLSearchParams, _scopes: string, flow: string | null): Promise<OAuthGrant> {
    this.completed++;
    this.flowsBack.push(flow);
    if (this.failure) return Promise.reject(this.failure);
    const who = this.signedInAs;
    return Promise.resolve({
      defaultName: 'Member One',
      postingAs: who,
      newAccountConfig: { who },
      reconnectConfig: (account: ConnectAccount) => {
        if (account.config.who !== who) throw new OAuthConnectError(`signed in as ${who}, not ${String(account.config.who)}`);
        return { who };
      },
      settle: () => {
        this.settled++;
        return Promise.resolve();
      },
      abandon: () => {
        this.abandoned++;
        return Promise.resolve();
      },
    });
  }
}

const account = (over: Partial<AccountView>): AccountView => ({
  id: '00000000-0000-4000-8000-00000000000a',
  provider: 'linkedin',
  name: 'Existing',
  status: 'needs_reauth',
  statusReason: null,
  config: { who: 'member-1' },
  circuit: { state: 'closed', openUntil: null, consecutiveFailures: 0 },
  retryPolicy: null,
  maxInFlight: 1,
  lastError: null,
  lastSuccessAt: null,
  createdAt: '2026-12-01T00:00:00.000Z',
  warnings: [],
  ...over,
});

/** AccountsService as far as the connect flows use it: one existing account, and what was saved. */
class Accounts {
  existing = account({});
  created: { name: string; config: Record<string, unknown> }[] = [];
  updated: Record<string, unknown>[] = [];
  failSaving = false;
  get(_workspaceId: string, id: string): Promise<AccountView> {
    return id === this.existing.id ? Promise.resolve(this.existing) : Promise.reject(new Error(`no account ${id}`));
  }
  create(_auth: AuthContext, dto: { name: string; config: Record<string, unknown> }): Promise<AccountView> {
    if (this.failSaving) return Promise.reject(new Error('the database went away'));
    this.created.push({ name: dto.name, config: dto.config });
    return Promise.resolve(account({ id: '00000000-0000-4000-8000-00000000000b', name: dto.name, config: dto.config }));
  }
  updateCountingResumed(_auth: AuthContext, id: string, dto: { config: Record<string, unknown> }) {
    this.updated.push(dto.config);
    return Promise.resolve({ account: account({ id, status: 'active', config: dto.config }), resumed: 2 });
  }
}

const session = (role: Role, id = '00000000-0000-4000-8000-0000000000f1'): ConnectSession => ({
  id,
  auth: {
    workspaceId: '00000000-0000-4000-8000-0000000000aa',
    role,
    bootstrap: false,
    principal: { kind: 'person', id: 'p' },
    label: 'Ada',
  },
});

function setUp() {
  const platform = new FakePlatform();
  const states = new States();
  const accounts = new Accounts();
  const service = new ConnectService(
    new OAuthConnectRegistry([platform]),
    states as unknown as ConnectStatesRepository,
    accounts as unknown as AccountsService,
  );
  const sessions = new Map<string, ConnectSession>();
  const editor = session('editor');
  sessions.set(editor.id, editor);
  const sessionById = (id: string) => Promise.resolve(sessions.get(id) ?? null);
  /** The platform's redirect back for a flow started at `url`. */
  const answer = (url: string, extra: Record<string, string> = {}) =>
    new URLSearchParams({ state: new URL(url).searchParams.get('state')!, code: 'c', ...extra });
  return { platform, states, accounts, service, sessions, editor, sessionById, answer };
}

describe('ConnectService (the connect flows every platform shares)', () => {
  it('binds a new state to the session and the browser, hashed, and creates the account once', async () => {
    const { platform, states, accounts, service, editor, sessionById, answer } = setUp();
    const started = await service.start(editor, 'linkedin', { name: 'On Fake' });
    const state = new URL(started.url).searchParams.get('state')!;
    expect(state.length).toBeGreaterThanOrEqual(43);
    expect(started.ttlMs).toBe(platform.flowTtlMs);
    const [[hash, row]] = [...states.rows];
    expect(hash).toBe(createHash('sha256').update(state).digest('hex'));
    expect(row).toMatchObject({ sessionId: editor.id, accountId: null, accountName: 'On Fake', requestedScopes: 'a b' });
    expect(row.browserHash.equals(createHash('sha256').update(started.browserToken).digest())).toBe(true);

    const outcome = await service.callback('linkedin', answer(started.url), started.browserToken, sessionById);
    expect(outcome).toMatchObject({ ok: true, kind: 'connected', postingAs: 'member-1', session: editor, stateUsed: true });
    expect(accounts.created).toEqual([{ name: 'On Fake', config: { who: 'member-1' } }]);
    expect(platform.settled).toBe(1);

    const again = await service.callback('linkedin', answer(started.url), started.browserToken, sessionById);
    expect(again).toMatchObject({ ok: false, status: 400, stateUsed: false });
    expect(!again.ok && again.message).toMatch(/^This Fake answer does not match a connection started here/);
    expect(platform.completed).toBe(1);
  });

  it("keeps what the platform asked to keep with the state and hands it back at the callback; without a name, the platform's", async () => {
    const { platform, states, accounts, service, editor, sessionById, answer } = setUp();
    const started = await service.start(editor, 'linkedin', { name: '', identifier: 'mastodon.example' });
    const [[, row]] = [...states.rows];
    expect(row).toMatchObject({ accountName: null, flow: 'flow for mastodon.example' });
    const outcome = await service.callback('linkedin', answer(started.url), started.browserToken, sessionById);
    expect(outcome).toMatchObject({ ok: true, kind: 'connected' });
    expect(platform.flowsBack).toEqual(['flow for mastodon.example']);
    expect(accounts.created).toEqual([{ name: 'Member One', config: { who: 'member-1' } }]);

    // A platform that keeps nothing gets null back.
    const plain = await service.start(editor, 'linkedin', { name: 'Plain' });
    await service.callback('linkedin', answer(plain.url), plain.browserToken, sessionById);
    expect(platform.flowsBack).toEqual(['flow for mastodon.example', null]);
  });

  it('leaves the flow to the browser that started it when another browser brings its answer', async () => {
    const { platform, accounts, service, editor, sessionById, answer } = setUp();
    const started = await service.start(editor, 'linkedin', { name: 'Mine' });
    for (const other of ['someone-else', undefined, 'x'.repeat(201)]) {
      const refused = await service.callback('linkedin', answer(started.url), other, sessionById);
      expect(refused).toMatchObject({ ok: false, status: 400, stateUsed: false });
    }
    const refused = await service.callback('linkedin', answer(started.url), 'someone-else', sessionById);
    expect(!refused.ok && refused.message).toMatch(/reached a different browser/);
    expect(platform.completed).toBe(0);
    expect(await service.callback('linkedin', answer(started.url), started.browserToken, sessionById)).toMatchObject({ ok: true });
    expect(accounts.created.map((a) => a.name)).toEqual(['Mine']);
  });

  it('re-checks the role at the callback, before the platform exchanges anything', async () => {
    const { platform, accounts, service, sessions, editor, sessionById, answer } = setUp();
    const started = await service.start(editor, 'linkedin', { name: 'Demoted' });
    sessions.set(editor.id, session('viewer', editor.id));
    const outcome = await service.callback('linkedin', answer(started.url), started.browserToken, sessionById);
    expect(outcome).toMatchObject({
      ok: false,
      status: 403,
      message: 'Your role does not allow connecting accounts any more. Nothing was changed.',
      stateUsed: true,
    });
    expect(platform.completed).toBe(0);
    expect(accounts.created).toEqual([]);
  });

  it('refuses when the session ended while the person was at the platform', async () => {
    const { platform, service, sessions, editor, sessionById, answer } = setUp();
    const started = await service.start(editor, 'linkedin', { name: 'Logged out' });
    sessions.clear();
    const outcome = await service.callback('linkedin', answer(started.url), started.browserToken, sessionById);
    expect(outcome).toMatchObject({ ok: false, status: 401, session: null, stateUsed: true });
    expect(platform.completed).toBe(0);
  });

  it("answers the platform's refusals with their status: 502 when the platform failed, 400 otherwise", async () => {
    const { platform, accounts, service, editor, sessionById, answer } = setUp();
    for (const [kind, status] of [
      ['platform', 502],
      ['refused', 400],
    ] as const) {
      platform.failure = new OAuthConnectError(`no (${kind})`, kind);
      const started = await service.start(editor, 'linkedin', { name: 'Refused' });
      const outcome = await service.callback('linkedin', answer(started.url), started.browserToken, sessionById);
      expect(outcome).toMatchObject({ ok: false, status, message: `no (${kind})`, session: editor, stateUsed: true });
    }
    expect(accounts.created).toEqual([]);
  });

  it('reconnects the same member through AccountsService, saying how many posts resumed', async () => {
    const { platform, accounts, service, editor, sessionById, answer } = setUp();
    const started = await service.start(editor, 'linkedin', { accountId: accounts.existing.id });
    const outcome = await service.callback('linkedin', answer(started.url), started.browserToken, sessionById);
    expect(outcome).toMatchObject({ ok: true, kind: 'reconnected', resumed: 2, account: { id: accounts.existing.id } });
    expect(accounts.updated).toEqual([{ who: 'member-1' }]);
    expect(platform.settled).toBe(1);
  });

  it('refuses a reconnect as someone else and lets the grant go, changing nothing', async () => {
    const { platform, accounts, service, editor, sessionById, answer } = setUp();
    platform.signedInAs = 'member-2';
    const started = await service.start(editor, 'linkedin', { accountId: accounts.existing.id });
    const outcome = await service.callback('linkedin', answer(started.url), started.browserToken, sessionById);
    expect(outcome).toMatchObject({ ok: false, status: 400, message: 'signed in as member-2, not member-1', session: editor });
    expect(accounts.updated).toEqual([]);
    expect({ settled: platform.settled, abandoned: platform.abandoned }).toEqual({ settled: 0, abandoned: 1 });
  });

  it('lets the grant go when saving the account fails, and lets the failure through', async () => {
    const { platform, accounts, service, editor, sessionById, answer } = setUp();
    accounts.failSaving = true;
    const started = await service.start(editor, 'linkedin', { name: 'Unsaved' });
    await expect(service.callback('linkedin', answer(started.url), started.browserToken, sessionById)).rejects.toThrow(
      'the database went away',
    );
    expect({ settled: platform.settled, abandoned: platform.abandoned }).toEqual({ settled: 0, abandoned: 1 });
  });

  it("refuses to start a reconnect of another platform's account, or a flow of a platform without OAuth", async () => {
    const { states, accounts, service, editor } = setUp();
    accounts.existing = account({ provider: 'bluesky', name: 'Sky' });
    await expect(service.start(editor, 'linkedin', { accountId: accounts.existing.id })).rejects.toThrow('Sky is not a Fake account');
    await expect(service.start(editor, 'webhook', { name: 'Blog' })).rejects.toBeInstanceOf(DomainError);
    expect(states.rows.size).toBe(0);
    expect(service.available('linkedin')).toBe(true);
    expect(service.available('webhook')).toBe(false);
  });
});
