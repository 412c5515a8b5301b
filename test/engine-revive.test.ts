import { EditDeadJobDto, RequeueDto } from '../src/dead-letter/dead-letter.dto';
import { DeadLetterService } from '../src/dead-letter/dead-letter.service';
import { answerOf } from './support/medium';
import { useMediumEngine } from './support/medium-engine';
import { pollUntil } from './support/poll';
import { Receiver } from './support/receiver';
import { NO_BREAKER } from './support/config';

/**
 * One rule for sending a dead job again, whoever asks (POST /v1/jobs/:id/retry or the
 * dead-letter queue): a fresh attempt budget, a new idempotency key iff the payload was edited,
 * and a publishBy that has passed dropped. Before, the manual retry kept the passed deadline: an
 * `expired` job was answered 200 and never delivered.
 *
 * And publishBy as docs/delivery.md reads it: a job reached after its deadline is dead as
 * `expired` without an attempt — also when it was leased and waiting in a worker.
 *
 * Medium tests (./support/medium-engine.ts): the worker, and the dead-letter service's calls the
 * routes make, without HTTP.
 */
describe('reviving dead jobs, and publishBy before an attempt', () => {
  const engine = useMediumEngine({ circuit: NO_BREAKER });
  const dlq = () => engine.m.get(DeadLetterService);

  /** Waits for the database's clock (the one the deadline sweep and the claim compare with) to pass `moment`. */
  const pastOnTheDatabaseClock = (moment: Date | string) =>
    pollUntil(
      `the database clock to pass ${new Date(moment).toISOString()}`,
      async () => (await engine.sql<{ past: boolean }>(`SELECT now() > $1::timestamptz AS past`, [new Date(moment)]))[0].past,
      (past) => past,
    );

  /**
   * A job that died `expired`: its receiver asks to come back in a minute, which falls after the
   * job's publishBy (8 s away: far enough that the first attempt comes before it on a loaded
   * machine too), so the attempt decides it is dead as expired.
   */
  async function expiredJob(r: Receiver, text: string): Promise<{ jobId: string; publishBy: string }> {
    const account = await engine.account(r.urlFor(`/hook/${encodeURIComponent(text)}`));
    const publishBy = new Date(Date.now() + 8_000).toISOString();
    const post = await engine.post({ text, targets: [{ accountId: account.id }], publishBy });
    const jobId = post.jobs[0].id;
    const dead = await engine.waitForJob(jobId, (j) => j.status === 'dead');
    expect(dead).toMatchObject({ deadReason: 'expired', idempotencyKey: jobId, attemptCount: 1 });
    return { jobId, publishBy };
  }

  it('an expired job retried through POST /v1/jobs/:id/retry and another requeued from the DLQ are both delivered, under the same key rule', async () => {
    const r = await engine.receiver();
    let up = false;
    r.setHandler(() => (up ? { status: 200, body: { id: 'remote' } } : { status: 503, headers: { 'retry-after': '60' } }));
    const [retried, retriedEdited, requeued, requeuedEdited] = await Promise.all([
      expiredJob(r, 'retried as it was'),
      expiredJob(r, 'retried after an edit'),
      expiredJob(r, 'requeued as it was'),
      expiredJob(r, 'requeued after an edit'),
    ]);
    for (const j of [retried, retriedEdited, requeued, requeuedEdited]) await pastOnTheDatabaseClock(j.publishBy); // every deadline is behind us
    up = true;
    for (const j of [retriedEdited, requeuedEdited]) {
      await dlq().edit(engine.m.admin, j.jobId, await engine.m.input(EditDeadJobDto, { text: 'corrected' }));
    }

    // The service calls of POST /v1/jobs/:id/retry and POST /v1/dlq/:jobId/requeue, answered as the API would.
    const requeue = async (jobId: string) => dlq().requeue(engine.m.admin, jobId, await engine.m.input(RequeueDto, {}));
    const answers = [
      await answerOf(dlq().retry(engine.m.admin, retried.jobId)),
      await answerOf(dlq().retry(engine.m.admin, retriedEdited.jobId)),
      await answerOf(requeue(requeued.jobId)),
      await answerOf(requeue(requeuedEdited.jobId)),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);

    const expectedKeys = new Map([
      [retried.jobId, retried.jobId],
      [retriedEdited.jobId, `${retriedEdited.jobId}.2`],
      [requeued.jobId, requeued.jobId],
      [requeuedEdited.jobId, `${requeuedEdited.jobId}.2`],
    ]);
    for (const [jobId, idempotencyKey] of expectedKeys) {
      const job = await engine.waitForJob(jobId, (j) => j.status === 'succeeded');
      expect(job.idempotencyKey).toBe(idempotencyKey);
      expect(job.remoteId).toBe('remote');
      expect(job.attempts.map((a) => [a.number, a.decision, a.idempotencyKey])).toEqual([
        [1, 'dead', jobId],
        [2, 'succeed', idempotencyKey],
      ]);
      // The passed deadline was dropped by the revival (the DLQ's view shows the job as it is now).
      const detail = await dlq().get(engine.m.admin.workspaceId, jobId);
      expect(detail.publishBy).toBeNull();
      // What the receiver saw: the first try and the revival, each under its key.
      const seen = r.requests.filter((q) => (JSON.parse(q.body) as { data: { jobId: string } }).data.jobId === jobId);
      expect(seen.map((q) => [q.headers['idempotency-key'], q.headers['webhook-id']])).toEqual([
        [jobId, jobId],
        [idempotencyKey, idempotencyKey],
      ]);
    }
    // The DLQ's audit trail keeps the deadline its requeue dropped.
    const audit = await dlq().get(engine.m.admin.workspaceId, requeued.jobId);
    expect(audit.audit.find((a) => a.action === 'requeue')?.before.publishBy).toBe(requeued.publishBy);
  }, 60_000);

  it('a leased job whose publishBy passes while it waits behind its account is dead as expired, with no attempt', async () => {
    const r = await engine.receiver();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    r.setHandler(async () => {
      await held;
      return 200;
    });
    // One attempt at a time: the second job is leased with the first and waits in the worker.
    const account = await engine.account(r.urlFor('/hook'), { maxInFlight: 1 });
    const first = await engine.post({ text: 'first in line', targets: [{ accountId: account.id }] });
    await r.waitFor(1);
    // Far enough ahead that the job is leased before it passes, on a loaded machine too.
    const publishBy = new Date(Date.now() + 5_000);
    const second = await engine.post({
      text: 'only useful for a second',
      targets: [{ accountId: account.id }],
      publishBy: publishBy.toISOString(),
    });
    const secondId = second.jobs[0].id;
    // It is leased to the worker (in_progress), not waiting in the database for the sweep.
    await engine.waitForJob(secondId, (j) => j.status === 'in_progress');
    await pastOnTheDatabaseClock(publishBy);
    release();

    await engine.waitForJob(first.jobs[0].id, (j) => j.status === 'succeeded');
    const job = await engine.waitForJob(secondId, (j) => j.status === 'dead');
    expect(job).toMatchObject({ deadReason: 'expired', attemptCount: 0, attempts: [] });
    expect(job.lastError).toEqual(expect.stringContaining('publishBy'));
    await engine.barrier(); // a claim round ran since: the expired job was not sent after all
    expect(r.requests).toHaveLength(1);
    const [{ n: attempts }] = await engine.sql<{ n: number }>(`SELECT count(*)::int AS n FROM attempts WHERE job_id = $1`, [secondId]);
    expect(attempts).toBe(0);
  }, 60_000);
});
