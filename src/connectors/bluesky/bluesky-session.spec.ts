import type { FetchLike } from '../../common/net/guarded-fetch';
import type { BlueskyConfig, BlueskyCredentials, StoredSession } from './bluesky-config';
import { BlueskySessions } from './bluesky-session';

/**
 * The in-memory session cache: bounded in size and in idle time, replaced when the account's
 * login changes, and never making an attempt wait past its deadline for a shared login.
 * A PDS is not needed for any of it; the fetch below answers createSession like one.
 */

const config = (identifier = 'alice.test'): BlueskyConfig => ({ identifier, service: 'https://pds.example' });
const session = (n: number): StoredSession => ({
  accessJwt: `access-${n}`,
  refreshJwt: `refresh-${n}`,
  did: 'did:plc:alice',
  handle: 'alice.test',
});
const credentials = (s: StoredSession | null = null, appPassword = 'aaaa-bbbb-cccc-dddd'): BlueskyCredentials => ({
  appPassword,
  session: s,
});

/** A fetch for createSession whose answer the test releases. */
function heldLogin(): { fetch: FetchLike; calls: () => number; release: () => void } {
  let calls = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const fetch: FetchLike = async () => {
    calls += 1;
    await released;
    return new Response(JSON.stringify({ ...session(99), email: 'a@b.c' }), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  };
  return { fetch, calls: () => calls, release };
}

const unused: FetchLike = () => Promise.reject(new Error('no network in this test'));

describe('BlueskySessions', () => {
  it('keeps at most maxAccounts sessions, dropping the least recently used', () => {
    const sessions = new BlueskySessions(unused, { maxAccounts: 3, idleMs: 60_000 });
    for (const id of ['a', 'b', 'c']) sessions.for(id, config(), credentials(session(1)));
    sessions.for('a', config(), credentials(session(1))); // a is used again: b is now the oldest
    sessions.for('d', config(), credentials(session(1)));
    expect(sessions.size).toBe(3);
    expect(['a', 'b', 'c', 'd'].map((id) => sessions.has(id))).toEqual([true, false, true, true]);
  });

  it("drops the session of an account unused for idleMs, a deleted one's included", () => {
    let now = 1_000_000;
    const sessions = new BlueskySessions(unused, { maxAccounts: 100, idleMs: 60_000 }, () => now);
    sessions.for('deleted', config(), credentials(session(1)));
    sessions.for('busy', config(), credentials(session(2)));
    now += 40_000;
    sessions.for('busy', config(), credentials(session(2)));
    now += 40_000; // deleted: 80 s idle; busy: 40 s
    sessions.for('busy', config(), credentials(session(2)));
    expect(sessions.has('deleted')).toBe(false);
    expect(sessions.has('busy')).toBe(true);
    expect(sessions.size).toBe(1);
  });

  it("replaces an account's session when its password, identifier or service changes, and keeps it otherwise", () => {
    const sessions = new BlueskySessions(unused);
    const first = sessions.for('acc', config(), credentials(session(1)));
    expect(sessions.for('acc', config(), credentials(session(1)))).toBe(first);
    const newPassword = sessions.for('acc', config(), credentials(null, 'eeee-ffff-gggg-hhhh'));
    expect(newPassword).not.toBe(first);
    expect(newPassword.current()).toBeNull();
    expect(sessions.for('acc', config('bob.test'), credentials(null, 'eeee-ffff-gggg-hhhh'))).not.toBe(newPassword);
  });

  it('adopts a session another process stored, and remembers only its recent lineage', () => {
    const sessions = new BlueskySessions(unused);
    const s = sessions.for('acc', config(), credentials(session(0)));
    for (let n = 1; n <= 40; n++) sessions.for('acc', config(), credentials(session(n)));
    expect(s.current()).toEqual(session(40));
    // A recent session of ours handed back (a job claimed before the store) changes nothing…
    sessions.for('acc', config(), credentials(session(39)));
    expect(s.current()).toEqual(session(40));
    // …one from long ago is no longer remembered as ours: the lineage does not grow forever.
    sessions.for('acc', config(), credentials(session(0)));
    expect(s.current()).toEqual(session(0));
  });
});

describe('BlueskySession waiting for a shared login', () => {
  it('stops an attempt at its deadline while the login goes on for the others', async () => {
    const login = heldLogin();
    const sessions = new BlueskySessions(login.fetch);
    const s = sessions.for('acc', config(), credentials());
    const late = s.ensure(AbortSignal.timeout(50));
    const patient = s.ensure(new AbortController().signal);
    await expect(late).rejects.toMatchObject({ code: 'attempt_deadline' });
    login.release();
    await expect(patient).resolves.toMatchObject({ accessJwt: 'access-99' });
    expect(login.calls()).toBe(1);
    expect(s.current()).toMatchObject({ refreshJwt: 'refresh-99' });
  });
});
