import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { openCredentials } from '../src/accounts/account-credentials';
import { SecretBox } from '../src/common/crypto/secret-box';
import { useEngine } from './support/engine';
import { FakeLinkedIn, startFakeLinkedIn } from './support/fake-linkedin';
import { pollUntil } from './support/poll';
import { bearer, testConfig } from './support/config';

/**
 * Credentials an attempt refreshed never overwrite newer ones a person saved while it ran
 * (issue "one owner", item 3): the worker stores them only if the account's credentials_version
 * did not move, and a refusal of the old credentials neither pauses the job nor marks the
 * account needs_reauth.
 *
 * LinkedIn is the platform that refreshes tokens (the fake follows LinkedIn's documented
 * refresh: test/support/fake-linkedin.ts). Its token endpoint is reached through a loopback
 * gate that holds the refresh until the test has saved new credentials, so "during a running
 * refresh" is a fact, not a race.
 */

/** Forwards to the fake LinkedIn, holding token refreshes until `open()`. */
async function startGate(target: string): Promise<{ url: string; refreshes: number; open(): void; close(): Promise<void> }> {
  let opened!: () => void;
  const gateOpen = new Promise<void>((resolve) => (opened = resolve));
  const state = { refreshes: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.url?.startsWith('/oauth/v2/accessToken')) {
          state.refreshes += 1;
          await gateOpen;
        }
        const answer = await fetch(`${target}${req.url}`, {
          method: req.method,
          headers: { 'content-type': String(req.headers['content-type'] ?? 'application/octet-stream') },
          body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
        });
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await answer.arrayBuffer()));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get refreshes() {
      return state.refreshes;
    },
    open: () => opened(),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('credentials refreshed by an attempt, and a person saving new ones meanwhile', () => {
  let fake: FakeLinkedIn;
  let gate: Awaited<ReturnType<typeof startGate>>;
  let n = 0;

  // The fake LinkedIn and its gate first (hooks run in the order they are registered), then an
  // app per test that talks to them.
  beforeEach(async () => {
    fake = await startFakeLinkedIn();
    gate = await startGate(fake.url);
  });
  const engine = useEngine(
    () => ({
      linkedin: {
        ...testConfig('postgres://unused').linkedin,
        clientId: fake.clientId,
        clientSecret: fake.clientSecret,
        apiVersion: '202510',
        apiBaseUrl: fake.url,
        oauthBaseUrl: gate.url,
      },
    }),
    { each: true },
  );
  afterEach(async () => {
    await gate.close();
    await fake.close();
  });

  /** A LinkedIn account whose token expires within the refresh window: its next attempt refreshes first. */
  async function expiringAccount(): Promise<string> {
    const res = await engine.t
      .http()
      .post('/v1/accounts')
      .set(bearer(engine.key))
      .send({
        provider: 'linkedin',
        name: `LinkedIn ${++n}`,
        config: {
          accessToken: fake.issueToken(),
          refreshToken: fake.issueRefreshToken(),
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
          authorUrn: fake.authorUrn,
        },
      });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  /** Waits until the job is leased to a worker (in_progress), read from the table. */
  async function waitForLease(jobId: string): Promise<void> {
    await pollUntil(
      `job ${jobId} to be leased`,
      async () => (await engine.sql<{ status: string }>(`SELECT status FROM jobs WHERE id = $1`, [jobId]))[0]?.status,
      (status) => status === 'in_progress',
    );
  }

  /** Waits until an attempt is inside its token refresh (held at the gate). */
  const refreshing = () =>
    pollUntil(
      'an attempt to refresh its token',
      () => gate.refreshes,
      (refreshes) => refreshes > 0,
    );

  const stored = async (accountId: string) => {
    const rows = await engine.sql<{ credentials: string; version: number; status: string }>(
      `SELECT credentials, credentials_version AS version, status FROM accounts WHERE id = $1`,
      [accountId],
    );
    const credentials = openCredentials(new SecretBox(engine.t.config.secretKey), accountId, rows[0].credentials) as {
      accessToken: string;
      refreshToken: string | null;
    };
    return { ...credentials, version: rows[0].version, status: rows[0].status };
  };

  async function saveWhileRefreshing(accountId: string, credentials: Record<string, unknown>): Promise<void> {
    expect(await refreshing()).toBe(1); // the attempt is inside its refresh now
    await engine.t
      .http()
      .patch(`/v1/accounts/${accountId}`)
      .set(bearer(engine.key))
      .send({ config: { ...credentials, authorUrn: fake.authorUrn } })
      .expect(200);
    gate.open();
  }

  it('new credentials saved during a running refresh survive it', async () => {
    const id = await expiringAccount();
    const post = await engine.post({ text: `refresh race ${++n}`, targets: [{ accountId: id }] });
    const saved = {
      accessToken: fake.issueToken(),
      refreshToken: fake.issueRefreshToken(),
      expiresAt: new Date(Date.now() + 60 * 86_400_000).toISOString(),
    };
    await saveWhileRefreshing(id, saved);

    const job = await engine.waitForJob(post.jobs[0].id, (j) => j.status === 'succeeded');
    expect(job.attempts).toHaveLength(1);
    // The post went out with the token the refresh obtained (the attempt's own business)...
    const refreshedToken = fake.posts.find((p) => p.urn === job.remoteId)!.token;
    expect(refreshedToken).not.toBe(saved.accessToken);
    // ...but what stays stored is what the person saved.
    const now = await stored(id);
    expect(now).toMatchObject({ accessToken: saved.accessToken, refreshToken: saved.refreshToken, status: 'active' });
    expect(now.accessToken).not.toBe(refreshedToken);
    expect(now.version).toBe(2); // created (1), the person's save (2); the refresh stored nothing
  }, 60_000);

  it('jobs of the account waiting in the worker while an attempt refreshes its credentials run next, with the refreshed ones', async () => {
    const id = await expiringAccount();
    await engine.t.http().patch(`/v1/accounts/${id}`).set(bearer(engine.key)).send({ maxInFlight: 1 }).expect(200);
    const first = await engine.post({ text: `refresh then queue ${++n}`, targets: [{ accountId: id }] });
    expect(await refreshing()).toBe(1); // the first attempt is inside its refresh: the account's one slot is taken
    const waiting = await engine.post({ text: `queued behind the refresh ${++n}`, targets: [{ accountId: id }] });
    // The second job is leased to this worker and waits for the slot.
    await waitForLease(waiting.jobs[0].id);
    gate.open();

    const done = await Promise.all([first, waiting].map((p) => engine.waitForJob(p.jobs[0].id, (j) => j.status === 'succeeded')));
    // One attempt each: the waiting job used the credentials the first attempt refreshed, no
    // failed attempt for credentials "that could not be read", and no second refresh.
    expect(done.map((j) => j.attempts.map((a) => a.errorClass))).toEqual([['success'], ['success']]);
    expect(gate.refreshes).toBe(1);
    const refreshed = await stored(id);
    expect(refreshed.version).toBe(2);
    expect(fake.posts.find((p) => p.urn === done[1].remoteId)!.token).toBe(refreshed.accessToken);
  }, 60_000);

  it('a refresh refused while a person saves new credentials neither pauses the job nor marks the account needs_reauth', async () => {
    const id = await expiringAccount();
    fake.fail('token', { status: 400, body: { error: 'invalid_request', error_description: 'The provided refresh token is revoked' } });
    const post = await engine.post({ text: `refused refresh race ${++n}`, targets: [{ accountId: id }] });
    const saved = { accessToken: fake.issueToken() };
    await saveWhileRefreshing(id, saved);

    // The refusal was of the old credentials: the job is retried at once with the new ones.
    const job = await engine.waitForJob(post.jobs[0].id, (j) => j.status === 'succeeded');
    expect(job.attempts.map((a) => [a.number, a.errorClass, a.decision])).toEqual([
      [1, 'auth', 'retry'],
      [2, 'success', 'succeed'],
    ]);
    expect(fake.posts.find((p) => p.urn === job.remoteId)!.token).toBe(saved.accessToken);
    const account = await engine.t.http().get(`/v1/accounts/${id}`).set(bearer(engine.key)).expect(200);
    expect(account.body).toMatchObject({ status: 'active', statusReason: null });
    expect((await stored(id)).accessToken).toBe(saved.accessToken);
  }, 60_000);
});
