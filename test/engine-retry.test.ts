import { JobView, listenOn, PortServer, useEngine } from './support/engine';
import { freePort } from './support/net';
import { bearer, NO_BREAKER } from './support/config';
import { verifySignature } from './support/receiver';

/**
 * The publish engine against real PostgreSQL and real loopback receivers: classification of
 * each outcome (the table in docs/delivery.md), retry timing (backoff, Retry-After, publishBy, maxAttempts),
 * re-authentication and the manual retry endpoint.
 *
 * The circuit breaker is pushed out of the way here (thresholds of 1000) so that a test that
 * fails many times in a row (connection refused) sees retries only; it has its own file,
 * engine-circuit.test.ts.
 */

interface PublishEvent {
  id: string;
  type: string;
  data: { postId: string; jobId: string; text: string };
}

describe('publish engine: retries and classification', () => {
  const engine = useEngine({ circuit: NO_BREAKER });
  let servers: PortServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });

  it('503, 503, 200: three signed requests with one idempotency key and three attempt rows', async () => {
    const r = await engine.receiver();
    r.respondSequence([
      { status: 503, body: 'down for maintenance' },
      { status: 503, body: 'still down' },
      { status: 200, body: { url: 'https://blog.example.com/p/42', id: 'p42' } },
    ]);
    const account = await engine.account(r.urlFor('/hook'));
    const post = await engine.post({ text: 'Third time lucky', targets: [{ accountId: account.id }] });
    const jobId = post.jobs[0].id;

    const job = await engine.waitForJob(jobId, (j) => j.status === 'succeeded');

    expect(r.requests).toHaveLength(3);
    for (const request of r.requests) {
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/hook');
      expect(request.headers['idempotency-key']).toBe(job.idempotencyKey);
      expect(request.headers['webhook-id']).toBe(job.idempotencyKey);
      const event = verifySignature(account.secret, request) as PublishEvent;
      expect(event.id).toBe(job.idempotencyKey);
      expect(event.type).toBe('post.publish');
      expect(event.data).toMatchObject({ postId: post.id, jobId, text: 'Third time lucky' });
    }
    // The verification is real: a tampered body is refused by the reference library.
    const first = r.requests[0];
    expect(() => verifySignature(account.secret, { ...first, body: first.body.replace('Third', 'Fourth') })).toThrow();

    expect(job.attemptCount).toBe(3);
    expect(job.remoteUrl).toBe('https://blog.example.com/p/42');
    expect(job.deadReason).toBeNull();
    expect(job.attempts.map((a) => a.number)).toEqual([1, 2, 3]);
    expect(job.attempts.map((a) => a.errorClass)).toEqual(['transient', 'transient', 'success']);
    expect(job.attempts.map((a) => a.decision)).toEqual(['retry', 'retry', 'succeed']);
    expect(job.attempts.map((a) => a.httpStatus)).toEqual([503, 503, 200]);
    expect(job.attempts.map((a) => a.networkError)).toEqual([null, null, null]);
    expect(job.attempts.map((a) => a.responseExcerpt)).toEqual([
      'down for maintenance',
      'still down',
      JSON.stringify({ url: 'https://blog.example.com/p/42', id: 'p42' }),
    ]);
    for (const a of job.attempts) {
      expect(a.latencyMs).toBeGreaterThanOrEqual(0);
      expect(Date.parse(a.finishedAt)).toBeGreaterThanOrEqual(Date.parse(a.startedAt));
    }
    // A retry's retryAt is set, and the next attempt does not start before it.
    expect(job.attempts[0].retryAt).not.toBeNull();
    expect(job.attempts[1].retryAt).not.toBeNull();
    expect(job.attempts[2].retryAt).toBeNull();
    expect(Date.parse(job.attempts[1].startedAt)).toBeGreaterThanOrEqual(Date.parse(job.attempts[0].retryAt!) - 5);
    expect(Date.parse(job.attempts[2].startedAt)).toBeGreaterThanOrEqual(Date.parse(job.attempts[1].retryAt!) - 5);
    expect((await engine.postView(post.id)).status).toBe('published');
  });

  it('Retry-After (delay-seconds and IMF-fixdate) holds the next attempt back for at least 3 s', async () => {
    // The backoff alone would be at most 200 ms: any wait of 3 s comes from the header.
    expect(engine.t.config.retry.maxDelayMs).toBeLessThan(1000);
    const seconds = await engine.receiver();
    const dated = await engine.receiver();
    seconds.respondSequence([{ status: 503, headers: { 'Retry-After': '3' }, body: 'busy' }, 200]);
    let promised = 0;
    dated.setHandler((_request, n) => {
      if (n > 0) return 200;
      // An HTTP-date has whole seconds: round up so that it is at least 3 s from this answer.
      promised = Math.ceil((Date.now() + 3_100) / 1000) * 1000;
      return { status: 503, headers: { 'Retry-After': new Date(promised).toUTCString() }, body: 'busy' };
    });
    const a = await engine.account(seconds.urlFor('/hook'));
    const b = await engine.account(dated.urlFor('/hook'));
    const [pa, pb] = await Promise.all([
      engine.post({ text: 'Retry-After seconds', targets: [{ accountId: a.id }] }),
      engine.post({ text: 'Retry-After date', targets: [{ accountId: b.id }] }),
    ]);
    const [ja, jb] = await Promise.all([
      engine.waitForJob(pa.jobs[0].id, (j) => j.status === 'succeeded'),
      engine.waitForJob(pb.jobs[0].id, (j) => j.status === 'succeeded'),
    ]);

    for (const [r, job] of [
      [seconds, ja],
      [dated, jb],
    ] as const) {
      expect(r.requests).toHaveLength(2);
      const gap = r.requests[1].receivedAt.getTime() - r.requests[0].receivedAt.getTime();
      expect(gap).toBeGreaterThanOrEqual(3_000);
      expect(job.attempts.map((x) => [x.httpStatus, x.errorClass, x.decision])).toEqual([
        [503, 'transient', 'retry'],
        [200, 'success', 'succeed'],
      ]);
      const first = job.attempts[0];
      expect(Date.parse(first.retryAt!) - Date.parse(first.finishedAt)).toBeGreaterThanOrEqual(3_000);
      expect(Date.parse(job.attempts[1].startedAt)).toBeGreaterThanOrEqual(Date.parse(first.retryAt!) - 5);
    }
    expect(dated.requests[1].receivedAt.getTime()).toBeGreaterThanOrEqual(promised);
  }, 60_000);

  it('400: dead at once as permanent, one attempt, the post failed', async () => {
    const r = await engine.receiver();
    r.respondWith({ status: 400, body: { error: 'title is required' } });
    const account = await engine.account(r.urlFor('/hook'));
    const post = await engine.post({ text: 'Rejected', targets: [{ accountId: account.id }] });

    const job = await engine.waitForJob(post.jobs[0].id, (j) => j.status === 'dead');

    expect(job.deadReason).toBe('permanent');
    expect(job.errorClass).toBe('permanent');
    expect(job.lastError).toBe('HTTP 400: the receiver rejected the payload');
    expect(job.attemptCount).toBe(1);
    expect(job.attempts).toHaveLength(1);
    expect(job.attempts[0]).toMatchObject({
      number: 1,
      httpStatus: 400,
      errorClass: 'permanent',
      decision: 'dead',
      retryAt: null,
      responseExcerpt: JSON.stringify({ error: 'title is required' }),
    });
    expect(r.requests).toHaveLength(1);
    expect((await engine.postView(post.id)).status).toBe('failed');
  });

  it('401: job paused, account needs_reauth, new jobs wait paused; re-entering the config resumes both', async () => {
    const r = await engine.receiver();
    // One transient failure first, so that the circuit has something for the PATCH to reset.
    r.respondSequence([{ status: 503 }, { status: 401, body: 'token expired' }, { status: 200, body: { id: 'ok' } }]);
    const url = r.urlFor('/hook');
    const account = await engine.account(url);
    const post1 = await engine.post({ text: 'Before the token expired', targets: [{ accountId: account.id }] });
    const job1Id = post1.jobs[0].id;

    const paused = await engine.waitForJob(job1Id, (j) => j.status === 'paused');
    expect(paused.errorClass).toBe('auth');
    expect(paused.deadReason).toBeNull();
    expect(paused.attempts.map((a) => [a.httpStatus, a.errorClass, a.decision])).toEqual([
      [503, 'transient', 'retry'],
      [401, 'auth', 'pause'],
    ]);
    const reauth = await engine.accountView(account.id);
    expect(reauth.status).toBe('needs_reauth');
    expect(reauth.statusReason).toEqual(expect.stringContaining('credentials'));
    expect(reauth.lastError).toEqual(expect.stringContaining('HTTP 401'));
    expect(reauth.circuit.consecutiveFailures).toBe(1);
    expect((await engine.postView(post1.id)).status).toBe('publishing');

    const post2 = await engine.post({ text: 'While it needs re-auth', targets: [{ accountId: account.id }] });
    const job2Id = post2.jobs[0].id;
    expect((post2.jobs[0] as unknown as JobView).status).toBe('paused');
    // A claim round ran since (a barrier delivery): nothing was sent to an account that needs re-auth.
    await engine.barrier();
    expect(r.requests).toHaveLength(2);
    const waiting = await engine.job(job2Id);
    expect(waiting.status).toBe('paused');
    expect(waiting.attemptCount).toBe(0);
    expect((await engine.job(job1Id)).status).toBe('paused');

    const patched = await engine.t.http().patch(`/v1/accounts/${account.id}`).set(bearer(engine.key)).send({ config: { url } });
    expect(patched.status).toBe(200);
    expect(patched.body.status).toBe('active');
    expect(patched.body.statusReason).toBeNull();
    expect(patched.body.circuit).toEqual({ state: 'closed', openUntil: null, consecutiveFailures: 0 });

    const [job1, job2] = await Promise.all([
      engine.waitForJob(job1Id, (j) => j.status === 'succeeded'),
      engine.waitForJob(job2Id, (j) => j.status === 'succeeded'),
    ]);
    expect(job1.attempts.map((a) => a.decision)).toEqual(['retry', 'pause', 'succeed']);
    expect(job2.attempts.map((a) => [a.number, a.httpStatus, a.decision])).toEqual([[1, 200, 'succeed']]);
    expect(r.requests).toHaveLength(4);
    // The signing secret survived the PATCH: the resumed deliveries verify with the original one.
    for (const request of r.requests.slice(2)) verifySignature(account.secret, request);
    expect(r.requests.filter((q) => q.headers['idempotency-key'] === job1.idempotencyKey)).toHaveLength(3);
    const after = await engine.accountView(account.id);
    expect(after.status).toBe('active');
    expect(after.lastSuccessAt).not.toBeNull();
  });

  it('302: dead after one attempt, the redirect is reported and not followed', async () => {
    const r = await engine.receiver();
    const elsewhere = await engine.receiver();
    r.respondWith({ status: 302, headers: { Location: elsewhere.urlFor('/moved?token=abc') } });
    const account = await engine.account(r.urlFor('/hook'));
    const post = await engine.post({ text: 'Moved', targets: [{ accountId: account.id }] });

    const job = await engine.waitForJob(post.jobs[0].id, (j) => j.status === 'dead');

    expect(job.deadReason).toBe('permanent');
    expect(job.attempts).toHaveLength(1);
    expect(job.attempts[0]).toMatchObject({ httpStatus: 302, errorClass: 'permanent', decision: 'dead' });
    expect(job.lastError).toEqual(expect.stringContaining('the endpoint redirected'));
    // The target is named for the operator, without its query string.
    expect(job.lastError).toEqual(expect.stringContaining(elsewhere.urlFor('/moved')));
    expect(job.lastError).not.toContain('token=abc');
    expect(r.requests).toHaveLength(1);
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('connection refused: transient ECONNREFUSED retries, then delivered once something listens', async () => {
    const port = await freePort();
    const account = await engine.account(`http://127.0.0.1:${port}/hook`);
    const post = await engine.post({ text: 'Nobody home', targets: [{ accountId: account.id }] });
    const jobId = post.jobs[0].id;

    const retrying = await engine.waitForJob(jobId, (j) => j.attempts.length >= 2 && j.status === 'scheduled');
    expect(retrying.deadReason).toBeNull();
    expect(retrying.nextAttemptAt).not.toBeNull();
    for (const a of retrying.attempts) {
      expect(a).toMatchObject({
        httpStatus: null,
        networkError: 'ECONNREFUSED',
        errorClass: 'transient',
        decision: 'retry',
        responseExcerpt: null,
        message: `connection refused by 127.0.0.1:${port}`,
      });
      expect(a.retryAt).not.toBeNull();
    }

    const server = await listenOn(port);
    servers.push(server);
    const done = await engine.waitForJob(jobId, (j) => j.status === 'succeeded');
    expect(server.arrivals).toHaveLength(1);
    expect(done.attempts.length).toBeGreaterThan(retrying.attempts.length - 1);
    const last = done.attempts[done.attempts.length - 1];
    expect(last).toMatchObject({ httpStatus: 200, networkError: null, errorClass: 'success', decision: 'succeed' });
    for (const a of done.attempts.slice(0, -1)) expect(a.networkError).toBe('ECONNREFUSED');
  });

  it('maxAttempts 3 on the account: dead as max_attempts after exactly 3 attempts', async () => {
    const r = await engine.receiver();
    r.respondWith({ status: 503, body: 'overloaded' });
    const account = await engine.account(r.urlFor('/hook'), { retryPolicy: { maxAttempts: 3 } });
    expect((await engine.accountView(account.id)) as unknown).toMatchObject({ retryPolicy: { maxAttempts: 3 } });
    const post = await engine.post({ text: 'Three strikes', targets: [{ accountId: account.id }] });

    const job = await engine.waitForJob(post.jobs[0].id, (j) => j.status === 'dead');

    expect(job.deadReason).toBe('max_attempts');
    expect(job.errorClass).toBe('transient');
    expect(job.lastError).toBe('HTTP 503: server unavailable');
    expect(job.attemptCount).toBe(3);
    expect(job.attempts.map((a) => [a.number, a.httpStatus, a.decision])).toEqual([
      [1, 503, 'retry'],
      [2, 503, 'retry'],
      [3, 503, 'dead'],
    ]);
    expect(r.requests).toHaveLength(3);
    expect((await engine.postView(post.id)).status).toBe('failed');
  });

  it('publishBy: a retry that would land after it makes the job dead as expired after one attempt', async () => {
    const r = await engine.receiver();
    r.respondWith({ status: 503, headers: { 'Retry-After': '10' } });
    const account = await engine.account(r.urlFor('/hook'));
    // Far enough ahead that the first attempt comes before it on a loaded machine too; the
    // Retry-After of 10 s still lands after it.
    const publishBy = new Date(Date.now() + 8_000);
    const post = await engine.post({
      text: 'Live event',
      targets: [{ accountId: account.id }],
      publishBy: publishBy.toISOString(),
    });

    const job = await engine.waitForJob(post.jobs[0].id, (j) => j.status === 'dead');

    expect(job.deadReason).toBe('expired');
    expect(job.attempts).toHaveLength(1);
    expect(job.attempts[0]).toMatchObject({ httpStatus: 503, errorClass: 'transient', decision: 'dead', retryAt: null });
    // Decided at the attempt, not by waiting for the deadline to pass.
    expect(Date.parse(job.finishedAt!)).toBeLessThan(publishBy.getTime());
    expect(r.requests).toHaveLength(1);
  });

  it('publishBy: a job paused past its deadline is dead as expired without any attempt', async () => {
    const r = await engine.receiver();
    const account = await engine.account(r.urlFor('/hook'));
    const disabled = await engine.t.http().patch(`/v1/accounts/${account.id}`).set(bearer(engine.key)).send({ status: 'disabled' });
    expect(disabled.status).toBe(200);
    expect(disabled.body.status).toBe('disabled');
    const publishBy = new Date(Date.now() + 1_000);
    const post = await engine.post({
      text: 'Only useful today',
      targets: [{ accountId: account.id }],
      publishBy: publishBy.toISOString(),
    });
    expect((post.jobs[0] as unknown as JobView).status).toBe('paused');

    const job = await engine.waitForJob(post.jobs[0].id, (j) => j.status === 'dead');

    expect(job.deadReason).toBe('expired');
    expect(job.attempts).toEqual([]);
    expect(job.attemptCount).toBe(0);
    expect(job.lastError).toEqual(expect.stringContaining('publishBy'));
    expect(Date.parse(job.finishedAt!)).toBeGreaterThanOrEqual(publishBy.getTime());
    expect(r.requests).toHaveLength(0);
    expect((await engine.postView(post.id)).status).toBe('failed');
  });

  it('POST /v1/jobs/:id/retry answers 409 while an attempt is in flight', async () => {
    const r = await engine.receiver();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    r.setHandler(async () => {
      await held;
      return 200;
    });
    const account = await engine.account(r.urlFor('/hook'));
    const post = await engine.post({ text: 'Slow receiver', targets: [{ accountId: account.id }] });
    const jobId = post.jobs[0].id;
    await r.waitFor(1);

    try {
      expect((await engine.job(jobId)).status).toBe('in_progress');
      const res = await engine.t.http().post(`/v1/jobs/${jobId}/retry`).set(bearer(engine.key));
      expect(res.status).toBe(409);
      expect(res.body.statusCode).toBe(409);
      expect(res.body.message).toEqual(expect.stringContaining('in flight'));
    } finally {
      release();
    }

    const job = await engine.waitForJob(jobId, (j) => j.status === 'succeeded');
    expect(job.attempts).toHaveLength(1);
    expect(r.requests).toHaveLength(1);
    // A published job cannot be retried either (it would publish twice).
    const again = await engine.t.http().post(`/v1/jobs/${jobId}/retry`).set(bearer(engine.key));
    expect(again.status).toBe(409);
  });

  it('POST /v1/jobs/:id/retry on a dead job delivers it and keeps the history', async () => {
    const r = await engine.receiver();
    r.respondWith({ status: 400, body: 'missing field' });
    const account = await engine.account(r.urlFor('/hook'));
    const post = await engine.post({ text: 'Fixed on their side', targets: [{ accountId: account.id }] });
    const jobId = post.jobs[0].id;
    await engine.waitForJob(jobId, (j) => j.status === 'dead');

    r.respondWith(200);
    const res = await engine.t.http().post(`/v1/jobs/${jobId}/retry`).set(bearer(engine.key));
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(jobId);
    expect(res.body.deadReason).toBeNull();

    const job = await engine.waitForJob(jobId, (j) => j.status === 'succeeded');
    expect(job.attemptCount).toBe(2);
    expect(job.attempts.map((a) => [a.number, a.httpStatus, a.errorClass, a.decision])).toEqual([
      [1, 400, 'permanent', 'dead'],
      [2, 200, 'success', 'succeed'],
    ]);
    expect(r.requests).toHaveLength(2);
    expect(r.requests.map((q) => q.headers['idempotency-key'])).toEqual([job.idempotencyKey, job.idempotencyKey]);
    expect((await engine.postView(post.id)).status).toBe('published');
  });
});
