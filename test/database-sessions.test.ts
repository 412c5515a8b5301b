import { Db, DatabaseUnavailableError } from '../src/database/db';
import { createTestDatabase, withClient } from './support/database';

/**
 * A process that goes quiet in the middle of a transaction (cut off from the network, frozen)
 * must not keep rows locked for the others (DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS). The
 * several-hosts fault suite met it: a worker cut off from PostgreSQL mid-round left a session
 * idle in transaction holding its jobs' rows, and the other workers (which skip locked rows) did
 * not reclaim them; without the timeout the server keeps such a session until TCP keepalive gives
 * up on the client, 2 hours by default.
 */
describe('database sessions', () => {
  const pools: Db[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((db) => db.onApplicationShutdown()));
  });

  it('a transaction that goes quiet holding a row lock is ended by the server, and the lock with it', async () => {
    const { url } = await createTestDatabase();
    await withClient(url, (c) => c.query(`CREATE TABLE lockme (id int PRIMARY KEY); INSERT INTO lockme VALUES (1)`));
    const db = new Db({
      databaseUrl: url,
      databasePoolSize: 2,
      databasePreparedStatements: true,
      databaseIdleInTransactionTimeoutMs: 500,
    });
    pools.push(db);
    let locked!: () => void;
    const holding = new Promise<void>((resolve) => (locked = resolve));
    const quiet = db.transaction(async (tx) => {
      await tx.query(`SELECT id FROM lockme WHERE id = 1 FOR UPDATE`);
      locked();
      // Silent for far longer than the limit, as a process that lost its network would be (and
      // longer than the other session below waits for the row).
      await new Promise((r) => setTimeout(r, 6_000));
      await tx.query(`UPDATE lockme SET id = 2 WHERE id = 1`);
    });
    quiet.catch(() => undefined);
    await holding;

    // Another session waits at most 5 s for the row (lock_timeout: past it, its SELECT fails): it
    // gets it, so the server ended the quiet one, which would otherwise hold it for 6 s. The bound
    // is the server's, not a wall clock read by the test, and leaves 4.5 s for a loaded machine.
    await withClient(url, async (c) => {
      await c.query(`SET lock_timeout = '5000ms'`);
      await c.query(`SELECT id FROM lockme WHERE id = 1 FOR UPDATE`);
    });
    await expect(quiet).rejects.toBeInstanceOf(DatabaseUnavailableError);
    // Nothing of the quiet transaction was committed, and the pool goes on with a new connection.
    expect(await db.query(`SELECT id FROM lockme`)).toEqual([{ id: 1 }]);
  });
});
