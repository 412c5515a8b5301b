import { BulkRequeueDto, EditDeadJobDto, RequeueDto } from '../src/dead-letter/dead-letter.dto';
import { DeadLetterService } from '../src/dead-letter/dead-letter.service';
import { WebhookAccount } from './support/engine';
import { answerOf } from './support/medium';
import { useMediumEngine } from './support/medium-engine';
import { pollUntil } from './support/poll';
import { ReceivedRequest, Receiver, verifySignature } from './support/receiver';
import { fastEngine, NO_BREAKER } from './support/config';

/**
 * The dead-letter queue with the real worker, real PostgreSQL, real loopback receivers (a medium
 * test: the services the API calls, no HTTP; what the routes answer is test/dlq-api.test.ts's).
 * A job dies the way the engine kills it (a 400 is permanent), a person fixes and requeues it
 * through the dead-letter service, and the receiver shows what actually went out, under which
 * idempotency key.
 */

interface PublishEvent {
  id: string;
  data: { jobId: string; text: string };
}

describe('dead-letter queue: requeued jobs reach the receiver', () => {
  // Circuit thresholds out of the way: 400s are permanent anyway, and this file is not about it.
  // A generous request timeout: with 100 attempts in flight on a loaded machine, a request can
  // wait seconds for its turn, and a timeout would be a (correct) retry this file does not count.
  const engine = useMediumEngine(() => {
    const fast = fastEngine();
    return { circuit: NO_BREAKER, http: { ...fast.http!, totalTimeoutMs: 20_000 }, worker: { ...fast.worker!, leaseMs: 60_000 } };
  });

  const jobIdOf = (r: ReceivedRequest) => (JSON.parse(r.body) as PublishEvent).data.jobId;
  const dlq = () => engine.m.get(DeadLetterService);
  /** POST /v1/dlq/:jobId/requeue's service call. */
  const requeue = async (jobId: string, body: Record<string, unknown> = {}) =>
    dlq().requeue(engine.m.admin, jobId, await engine.m.input(RequeueDto, body));
  /** POST /v1/dlq/requeue's service call. */
  const bulkRequeue = async (body: Record<string, unknown>) =>
    dlq().bulkRequeue(engine.m.admin, await engine.m.input(BulkRequeueDto, body));
  const count = async (sql: string, params: unknown[]) => (await engine.sql<{ n: number }>(sql, params))[0].n;

  /** A post to one account whose receiver answers `first` and then 200; waits for its job to be dead. */
  async function deadByA400(text: string): Promise<{ r: Receiver; account: WebhookAccount; jobId: string }> {
    const r = await engine.receiver();
    r.respondSequence([
      { status: 400, body: { error: 'title is required' } },
      { status: 200, body: { id: 'ok' } },
    ]);
    const account = await engine.account(r.urlFor('/hook'));
    const post = await engine.post({ text, targets: [{ accountId: account.id }] });
    const jobId = post.jobs[0].id;
    const dead = await engine.waitForJob(jobId, (j) => j.status === 'dead');
    expect(dead).toMatchObject({ deadReason: 'permanent', errorClass: 'permanent', idempotencyKey: jobId });
    return { r, account, jobId };
  }

  it('a job dead by a 400, edited and requeued, arrives with the edited text and a new idempotency key', async () => {
    const { r, account, jobId } = await deadByA400('Missing the title');
    const edited = await dlq().edit(
      engine.m.admin,
      jobId,
      await engine.m.input(EditDeadJobDto, { text: 'Now with a title', title: 'Herald 1.0' }),
    );
    expect(edited.requeueIdempotencyKey).toBe(`${jobId}.2`);
    await requeue(jobId);

    const job = await engine.waitForJob(jobId, (j) => j.status === 'succeeded');
    const [first, second] = await r.waitFor(2);
    expect(r.requests).toHaveLength(2);
    const before = verifySignature(account.secret, first) as PublishEvent;
    const after = verifySignature(account.secret, second) as PublishEvent & { data: { title: string } };
    expect(before).toMatchObject({ id: jobId, data: { text: 'Missing the title' } });
    expect(after).toMatchObject({ id: `${jobId}.2`, data: { jobId, text: 'Now with a title', title: 'Herald 1.0' } });
    expect(second.headers['idempotency-key']).toBe(`${jobId}.2`);
    expect(second.headers['webhook-id']).toBe(`${jobId}.2`);
    // History kept: both attempts, each with the key it was sent under.
    expect(job.idempotencyKey).toBe(`${jobId}.2`);
    expect(job.attempts.map((a) => [a.number, a.httpStatus, a.decision, a.idempotencyKey])).toEqual([
      [1, 400, 'dead', jobId],
      [2, 200, 'succeed', `${jobId}.2`],
    ]);
  });

  it('an unedited requeue goes out under the same idempotency key', async () => {
    const { r, jobId } = await deadByA400('Sent as it was');
    await requeue(jobId);
    await engine.waitForJob(jobId, (j) => j.status === 'succeeded');
    const requests = await r.waitFor(2);
    expect(requests.map((x) => x.headers['idempotency-key'])).toEqual([jobId, jobId]);
    expect(requests.map((x) => (JSON.parse(x.body) as PublishEvent).data.text)).toEqual(['Sent as it was', 'Sent as it was']);
  });

  it('simultaneous requeues (and a manual retry) of one dead job make exactly one delivery', async () => {
    const { r, jobId } = await deadByA400('Click, click, click');
    // Each outcome as the API would answer it: 200, or the status of the service's domain error.
    const [one, two, bulk, retry] = await Promise.all([
      answerOf(requeue(jobId)),
      answerOf(requeue(jobId)),
      answerOf(bulkRequeue({ ids: [jobId] })),
      answerOf(dlq().retry(engine.m.admin, jobId)),
    ]);
    // Of the three DLQ requeues at most one moved the job (the others: 409, or a reported no-op);
    // none did if the manual retry got there first. The retry answers 200 on a job that is
    // scheduled again ("retry now" only moves its run time) or took it from dead itself.
    const dlqMoved = [one.status === 200, two.status === 200, bulk.body?.requeued === 1].filter(Boolean).length;
    expect(dlqMoved).toBeLessThanOrEqual(1);
    for (const a of [one, two]) expect([200, 409]).toContain(a.status);
    expect(bulk.status).toBe(200);
    expect([200, 409]).toContain(retry.status);
    // Each move out of dead is in the audit trail once: the DLQ's requeues as many as moved it, and
    // the retry's (a requeue marked via: retry) when it got there first; one move in all. (Counting
    // every requeue event against dlqMoved failed whenever the retry won the race: rare over HTTP,
    // where its request went out last, and about one run in five once the four calls start together.)
    const [{ requeues, retried }] = await engine.sql<{ requeues: number; retried: number }>(
      `SELECT count(*) FILTER (WHERE NOT after ? 'via')::int AS requeues, count(*) FILTER (WHERE after->>'via' = 'retry')::int AS retried
       FROM audit_events WHERE subject_id = $1 AND kind = 'failed_post' AND action = 'requeue'`,
      [jobId],
    );
    expect(requeues).toBe(dlqMoved);
    expect(requeues + retried).toBe(1);

    const job = await engine.waitForJob(jobId, (j) => j.status === 'succeeded');
    await engine.barrier(); // a claim round ran since: nothing else went out
    expect(r.requests).toHaveLength(2);
    expect(job.attempts).toHaveLength(2);
  });

  it('bulk requeue by filter moves exactly the 500 matching dead jobs, and every one is delivered', async () => {
    const r = await engine.receiver();
    let failing = true;
    r.setHandler((req) =>
      req.path.startsWith('/other') ? { status: 404 } : failing ? { status: 400, body: 'rejected' } : { status: 200 },
    );
    const accounts = await Promise.all(Array.from({ length: 20 }, (_, i) => engine.account(r.urlFor(`/a/${i}`))));
    const odd = await engine.account(r.urlFor('/other'));
    const posts = await Promise.all(
      Array.from({ length: 25 }, (_, i) => engine.post({ text: `Bulk ${i}`, targets: accounts.map((a) => ({ accountId: a.id })) })),
    );
    const bulkIds = new Set(posts.flatMap((p) => p.jobs.map((j) => j.id)));
    expect(bulkIds.size).toBe(500);
    await Promise.all(Array.from({ length: 5 }, (_, i) => engine.post({ text: `Gone ${i}`, targets: [{ accountId: odd.id }] })));

    const deadOf = (ids: string[]) => count(`SELECT count(*)::int AS n FROM jobs WHERE status = 'dead' AND id = ANY($1::uuid[])`, [ids]);
    await pollUntil(
      '500 jobs dead by a 400',
      () => deadOf([...bulkIds]),
      (n) => n === 500,
      60_000,
    );
    const odds = () => count(`SELECT count(*)::int AS n FROM jobs WHERE status = 'dead' AND account_id = $1`, [odd.id]);
    await pollUntil('5 jobs dead by a 404', odds, (n) => n === 5);
    expect(r.requests).toHaveLength(505);
    failing = false;
    r.reset();

    const res = await bulkRequeue({ filter: { q: 'HTTP 400', provider: 'webhook' } });
    expect(res.requeued).toBe(500);
    expect(new Set(res.ids)).toEqual(bulkIds);
    expect(res.skipped).toEqual([]);
    expect(res.more).toBe(false);

    const succeeded = () =>
      count(`SELECT count(*)::int AS n FROM jobs WHERE status = 'succeeded' AND id = ANY($1::uuid[])`, [[...bulkIds]]);
    await pollUntil('500 requeued jobs delivered', succeeded, (n) => n === 500, 60_000);
    await engine.barrier(); // a claim round ran since: nothing else went out
    // Each of the 500 exactly once; the 404 jobs stayed dead and were not sent again.
    expect(r.requests).toHaveLength(500);
    expect(new Set(r.requests.map(jobIdOf))).toEqual(bulkIds);
    expect(await odds()).toBe(5);
    expect(await deadOf([...bulkIds])).toBe(0);
  }, 90_000);
});
