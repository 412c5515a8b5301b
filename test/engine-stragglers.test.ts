import { useMediumEngine } from './support/medium-engine';
import { pollUntil } from './support/poll';
import { fastEngine } from './support/config';

/**
 * A post accepted in the instant its account stops being active (its intake read the account as
 * active; the round that turned it needs_reauth paused the waiting jobs before the post's job
 * committed) leaves a job `scheduled` on an account the claim skips. The queue's maintenance
 * finds such jobs every poll interval and pauses them, as the round would have; enabling the
 * account resumes them and they go out (pause-jobs.ts, pauseStragglers).
 *
 * The race itself is a few milliseconds wide (test/alerts.test.ts met it once in four whole-suite
 * runs); here its outcome is made directly: the account's status is changed in SQL after its job
 * was accepted, as if the round's pause had run before the job committed.
 */
describe('publish engine: waiting jobs of an account that is not active', () => {
  const engine = useMediumEngine(fastEngine());

  it('pauses a straggler left scheduled on a needs_reauth account, leaves an active account alone, and resumes it when the account is enabled', async () => {
    const r = await engine.receiver(() => 200);
    const stale = await engine.account(r.urlFor('/stale'), { name: 'Stale' });
    const fine = await engine.account(r.urlFor('/fine'), { name: 'Fine' });
    const at = new Date(Date.now() + 3_000).toISOString();
    const staleJob = (await engine.post({ text: 'accepted as the account changed', scheduledAt: at, targets: [{ accountId: stale.id }] }))
      .jobs[0].id;
    const fineJob = (await engine.post({ text: 'an active account', scheduledAt: at, targets: [{ accountId: fine.id }] })).jobs[0].id;
    expect((await engine.job(staleJob)).status).toBe('scheduled');

    // The round's outcome, after the job committed: the account needs a person, its job still says scheduled.
    await engine.sql(`UPDATE accounts SET status = 'needs_reauth', status_reason = 'the receiver refused the credentials' WHERE id = $1`, [
      stale.id,
    ]);

    const paused = await engine.waitForJob(staleJob, (j) => j.status === 'paused', 10_000);
    expect(paused.attemptCount).toBe(0);
    // The sweep paused only that account's job: the other one is delivered at its time.
    const sent = await engine.waitForJob(fineJob, (j) => j.status === 'succeeded', 30_000);
    expect(sent.attemptCount).toBe(1);
    expect((await engine.job(staleJob)).status).toBe('paused');
    expect(r.requests.filter((q) => q.path === '/stale')).toHaveLength(0);

    // A person enables the account: the paused job resumes and goes out.
    await engine.updateAccount(stale.id, { status: 'active' });
    const out = await engine.waitForJob(staleJob, (j) => j.status === 'succeeded', 30_000);
    expect(out.attemptCount).toBe(1);
    await pollUntil(
      'the receiver to get the resumed post',
      () => r.requests.filter((q) => q.path === '/stale').length,
      (n) => n === 1,
    );
  });
});
