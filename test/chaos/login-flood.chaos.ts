import { createTestDatabase } from '../support/database';
import { byStatus, flood, FloodRequest, postRequest, quantile, steadyWhile, summary } from '../support/flood';
import { waitUntil } from '../support/poll';
import { Receiver, startReceiver } from '../support/receiver';
import { api } from '../support/service';
import type { ServiceProcess } from '../support/process';
import { CHAOS_KEY, Fleet, webhookAccounts } from './support/herald';
import { scaled } from './support/scale';

/**
 * A flood of wrong credentials from one address while another address publishes
 * (docs/fault-suite.md, "A login flood"): one built Herald process with its defaults (pool of
 * 20, the worker delivering to a loopback receiver). 127.0.0.1 sends wrong API keys on 40
 * connections for 15 s, then 127.0.0.3 wrong passwords at /settings/login the same way; all the
 * while 127.0.0.2 publishes one post at a time with a valid key. Printed: each side's count,
 * statuses, median, p99 and max. Bounded: the flooder gets only 401 and 429; the publisher no
 * 5xx, p99 under 1 s, and every post it made is delivered.
 *
 * Before the throttle stopped locking its row across the check (login-throttle.service.ts),
 * the same flood took the pool: the publisher waited 5 s and got 503s.
 */

const FLOOD_MS = scaled(15_000, 3_000);
const CONCURRENCY = 40;
const OWNER = 'chaos-owner@example.test';
const PASSWORD = 'chaos suite owner password';

describe('a login flood from one address', () => {
  const fleet = new Fleet();
  let receiver: Receiver | null = null;
  afterEach(async () => {
    await fleet.stopAll();
    await receiver?.close();
  });

  it('leaves another address publishing: no 5xx, p99 under 1 s, every post delivered', async () => {
    receiver = await startReceiver();
    const { url } = await createTestDatabase();
    const herald = await fleet.start(url);
    const [accountId] = await webhookAccounts(herald, [receiver.url], 1);
    const person = await api(herald, CHAOS_KEY, 'POST', '/v1/people', { email: OWNER, name: 'Chaos Owner', password: PASSWORD });
    expect(person.status).toBe(201);

    const form = await loginForm(herald);
    const floods: { label: string; from: string; next: (i: number) => FloodRequest }[] = [
      {
        label: 'wrong API keys',
        from: '127.0.0.1',
        next: (i) => ({ method: 'GET', path: '/v1/api-keys', headers: { authorization: `Bearer hk_flood-${i}-${'x'.repeat(40)}` } }),
      },
      {
        label: 'wrong passwords',
        from: '127.0.0.3',
        next: (i) => ({
          method: 'POST',
          path: '/settings/login',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie },
          body: new URLSearchParams({ _csrf: form.csrf, email: OWNER, password: `wrong password ${i}` }).toString(),
        }),
      },
    ];
    let made = 0;
    for (const f of floods) {
      const flooding = flood(herald.url, f.from, { concurrency: CONCURRENCY, durationMs: FLOOD_MS }, f.next);
      const publisher = await steadyWhile(herald.url, '127.0.0.2', flooding, (i) =>
        postRequest(CHAOS_KEY, accountId, `Published during a login flood, ${i}`),
      );
      const flooder = await flooding;
      made += publisher.filter((s) => s.status === 201).length;
      const p99 = quantile(
        publisher.map((s) => s.ms),
        0.99,
      );
      const errors = publisher.filter((s) => s.status >= 500 || s.status === 0).length;
      process.stdout.write(
        `\n${f.label} for ${FLOOD_MS / 1000} s on ${CONCURRENCY} connections\n` +
          `  ${summary(`flooder ${f.from}`, flooder)}\n  ${summary('publisher 127.0.0.2', publisher)}\n` +
          `  publisher: p99 ${p99.toFixed(1)} ms, ${errors} answers 5xx or none\n`,
      );
      expect(flooder.filter((s) => s.status !== 401 && s.status !== 429)).toEqual([]);
      expect(byStatus(flooder)[429]).toBeGreaterThan(0);
      expect(publisher.filter((s) => s.status !== 201)).toEqual([]);
      expect(errors).toBe(0);
      expect(p99).toBeLessThan(1_000);
    }
    // Nothing accepted is lost: every post the publisher made went out.
    await waitUntil(() => receiver!.requests.length >= made, 120_000, `${made} deliveries at the receiver`);
  });
});

/** The login form's token and its cookie, as a script would fetch them once. */
async function loginForm(herald: ServiceProcess): Promise<{ csrf: string; cookie: string }> {
  const res = await fetch(`${herald.url}/settings/login`);
  const html = await res.text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  const cookie = res.headers
    .getSetCookie()
    .find((c) => c.startsWith('herald_login='))
    ?.split(';')[0];
  if (!csrf || !cookie) throw new Error('the login form has no token or cookie');
  return { csrf, cookie };
}
