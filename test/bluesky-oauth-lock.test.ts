import { randomBytes } from 'node:crypto';
import { SecretBox } from '../src/common/crypto/secret-box';
import { leaseLock, sessionStore } from '../src/connectors/bluesky/oauth/bluesky-oauth-stores';
import { BlueskyOAuthRepository } from '../src/connectors/bluesky/oauth/bluesky-oauth.repository';
import { Db } from '../src/database/db';
import { createTestDatabase, withClient } from './support/database';
import { waitUntil } from './support/poll';

/**
 * The Bluesky OAuth request lock and session rows on PostgreSQL, as two processes see them: two
 * pools (two sets of connections, nothing shared in memory but the database). Scopes differ per
 * "process" only where the library's in-process lock would otherwise queue them first; the
 * lease in bluesky_oauth_locks is what keeps them apart.
 */
describe('Bluesky OAuth: the refresh lease across two connections', () => {
  let url: string;
  let one: Db;
  let two: Db;

  beforeAll(async () => {
    url = (await createTestDatabase()).url;
    const config = { databaseUrl: url, databasePoolSize: 2, databasePreparedStatements: true, databaseIdleInTransactionTimeoutMs: 10_000 };
    one = new Db(config);
    two = new Db(config);
  });
  afterAll(async () => {
    await one?.onApplicationShutdown();
    await two?.onApplicationShutdown();
  });

  /** The repository of a "process", counting its attempts to take a lock. */
  function processOn(db: Db) {
    const rows = new BlueskyOAuthRepository(db);
    const tries = { n: 0 };
    const counted = {
      tryLock: async (name: string, holder: string, leaseMs: number) => {
        tries.n += 1;
        return rows.tryLock(name, holder, leaseMs);
      },
      unlock: (name: string, holder: string) => rows.unlock(name, holder),
    };
    return { rows, tries, counted };
  }

  it('keeps a second holder waiting until the first gives the lease back', async () => {
    const a = processOn(one);
    const b = processOn(two);
    // The library's in-process lock is keyed by name: distinct scopes keep it out of the way here,
    // and one shared lease name in the table stands for "the same session".
    const lockA = leaseLock(
      { ...a.counted, tryLock: (_n, h, l) => a.counted.tryLock('s1:refresh', h, l), unlock: (_n, h) => a.counted.unlock('s1:refresh', h) },
      'process-a',
      { leaseMs: 60_000, waitMs: 60_000 },
    );
    const lockB = leaseLock(
      { ...b.counted, tryLock: (_n, h, l) => b.counted.tryLock('s1:refresh', h, l), unlock: (_n, h) => b.counted.unlock('s1:refresh', h) },
      'process-b',
      { leaseMs: 60_000, waitMs: 60_000 },
    );
    let release!: () => void;
    const order: string[] = [];
    const first = lockA(
      'refresh',
      () =>
        new Promise<void>(
          (resolve) =>
            (release = () => {
              order.push('a done');
              resolve();
            }),
        ),
    );
    await waitUntil(() => a.tries.n === 1 && release !== undefined, 10_000, 'the first process to hold the lease');
    const second = lockB('refresh', () => {
      order.push('b ran');
    });
    // The second process has asked twice and been refused twice: it is waiting.
    await waitUntil(() => b.tries.n >= 2, 10_000, 'the second process to be refused');
    expect(order).toEqual([]);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['a done', 'b ran']);
    expect((await withClient(url, (c) => c.query('SELECT * FROM bluesky_oauth_locks'))).rowCount).toBe(0);
  });

  it('lets a waiter take over a lease whose holder died, once the lease has run out', async () => {
    // A holder that never gives its lease back (a process killed mid-refresh).
    await withClient(url, (c) =>
      c.query(
        `INSERT INTO bluesky_oauth_locks (name, holder, expires_at) VALUES ('dead:refresh', gen_random_uuid(), now() + interval '300 milliseconds')`,
      ),
    );
    const b = processOn(two);
    const lock = leaseLock(b.counted, 'dead', { leaseMs: 60_000, waitMs: 30_000 });
    expect(await lock('refresh', () => 'took over')).toBe('took over');
    expect(b.tries.n).toBeGreaterThanOrEqual(2);
  });

  it('keeps session rows sealed and per account', async () => {
    const box = new SecretBox(randomBytes(32));
    const store = sessionStore(new BlueskyOAuthRepository(one), box, '2b0f4d0e-4f5e-4a59-9d53-0c3c2b6c8b11');
    const session = {
      dpopJwk: { kty: 'EC' as const, crv: 'P-256' as const, x: 'x', y: 'y', d: 'dpop-private' },
      authMethod: { method: 'private_key_jwt' as const, kid: 'k' },
      tokenSet: { sub: 'did:plc:alice', refresh_token: 'rt-secret-value' },
    };
    await store.set('did:plc:alice', session as never);
    const row = (await withClient(url, (c) => c.query('SELECT did, session FROM bluesky_oauth_sessions'))).rows[0] as {
      did: string;
      session: string;
    };
    expect(row.did).toBe('did:plc:alice');
    expect(row.session).not.toMatch(/rt-secret|dpop-private/);
    expect(await sessionStore(new BlueskyOAuthRepository(two), box, '2b0f4d0e-4f5e-4a59-9d53-0c3c2b6c8b11').get('did:plc:alice')).toEqual(
      session,
    );
  });
});
