import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../../common/crypto/secret-box';
import { leaseLock, RefreshLockTimeout, sessionStore, stateStore } from './bluesky-oauth-stores';

const done = <T>(value: T): Promise<T> => Promise.resolve(value);

/** The repository's contract in memory (the SQL itself is exercised against PostgreSQL in test/). */
function memoryRows(now: () => number = Date.now) {
  const states = new Map<string, string>();
  const sessions = new Map<string, { did: string; sealed: string }>();
  const locks = new Map<string, { holder: string; until: number }>();
  return {
    states,
    sessions,
    locks,
    putState: (hash: Buffer, sealed: string) => done(void states.set(hash.toString('hex'), sealed)),
    getState: (hash: Buffer) => done(states.get(hash.toString('hex')) ?? null),
    deleteState: (hash: Buffer) => done(void states.delete(hash.toString('hex'))),
    putSession: (id: string, did: string, sealed: string) => done(void sessions.set(id, { did, sealed })),
    getSession: (id: string) => done(sessions.get(id) ?? null),
    deleteSession: (id: string) => done(void sessions.delete(id)),
    tryLock: (name: string, holder: string, leaseMs: number) => {
      const held = locks.get(name);
      if (held && held.until > now()) return done(false);
      locks.set(name, { holder, until: now() + leaseMs });
      return done(true);
    },
    unlock: (name: string, holder: string) => {
      if (locks.get(name)?.holder === holder) locks.delete(name);
      return done(undefined);
    },
  };
}

const box = new SecretBox(randomBytes(32));
const jwk = { kty: 'EC' as const, crv: 'P-256' as const, x: 'xx', y: 'yy', d: 'private-part-of-the-dpop-key' };

describe('Bluesky OAuth stores', () => {
  it('keeps a pending flow sealed, under the hash of its state', async () => {
    const rows = memoryRows();
    const store = stateStore(rows, box);
    const value = {
      iss: 'https://pds.example',
      dpopJwk: jwk,
      authMethod: { method: 'private_key_jwt' as const, kid: 'k' },
      verifier: 'pkce-verifier-123',
      appState: 'mine',
    };
    await store.set('state-abc', value);
    const [[key, sealed]] = [...rows.states];
    expect(key).not.toContain('state-abc');
    expect(sealed).not.toMatch(/pkce-verifier|private-part|state-abc/);
    expect(await store.get('state-abc')).toEqual(value);
    // A ciphertext moved under another state does not open there.
    rows.states.set(Buffer.alloc(32, 1).toString('hex'), sealed);
    await expect(stateStore({ ...rows, getState: () => done(sealed) }, box).get('another')).rejects.toThrow(/could not be decrypted/);
    await store.del('state-abc');
    expect(await store.get('state-abc')).toBeUndefined();
  });

  it('binds a session store to its row: another DID reads as no session, and a ciphertext copied to another row does not open', async () => {
    const rows = memoryRows();
    const mine = sessionStore(rows, box, 'row-1');
    const session = {
      dpopJwk: jwk,
      authMethod: { method: 'private_key_jwt' as const, kid: 'k' },
      tokenSet: { sub: 'did:plc:alice', access_token: 'at-secret', refresh_token: 'rt-secret' },
    };
    await mine.set('did:plc:alice', session as never);
    expect(rows.sessions.get('row-1')!.sealed).not.toMatch(/secret|private-part/);
    expect(await mine.get('did:plc:alice')).toEqual(session);
    expect(await mine.get('did:plc:bob')).toBeUndefined();
    rows.sessions.set('row-2', rows.sessions.get('row-1')!);
    await expect(sessionStore(rows, box, 'row-2').get('did:plc:alice')).rejects.toThrow(/could not be decrypted/);
    await mine.del('did:plc:alice');
    expect(rows.sessions.has('row-1')).toBe(false);
  });

  it('runs one holder at a time, gives the lock back even when the work fails, and gives up after waitMs', async () => {
    let clock = 0;
    const rows = memoryRows(() => clock);
    const sleep = (ms: number) => {
      clock += ms;
      return done(undefined);
    };
    const lock = leaseLock(rows, 'bluesky-oauth:s1', { leaseMs: 1000, waitMs: 500, sleep, now: () => clock });
    await expect(lock('refresh', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(rows.locks.size).toBe(0);
    expect(await lock('refresh', () => 'done')).toBe('done');
    // Held by another process (a lease that has not run out): this one waits, then gives up.
    rows.locks.set('bluesky-oauth:s1:refresh', { holder: 'someone-else', until: 10_000 });
    await expect(lock('refresh', () => 'never')).rejects.toBeInstanceOf(RefreshLockTimeout);
    expect(clock).toBeGreaterThanOrEqual(500);
    // A lease that ran out (its holder died) is taken over.
    clock = 10_001;
    expect(await lock('refresh', () => 'taken over')).toBe('taken over');
  });
});
