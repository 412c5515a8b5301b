import { EventsService } from '../src/events/events.service';
import { JobLifecycle } from '../src/queue/job-lifecycle.service';
import { bearer } from './support/config';
import { useEngine, waitForPost } from './support/engine';
import { pollUntil } from './support/poll';
import { Receiver, ReceivedRequest, verifySignature } from './support/receiver';

/** An event as an endpoint receives it (docs/events.md). */
interface ReceivedEvent {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** pollUntil with the description last (it reads better after the condition). */
const until = <T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string): Promise<T> => pollUntil(what, read, done);

const eventsOf = (r: Receiver, path = '/events'): ReceivedEvent[] =>
  r.requests.filter((q) => q.path === path).map((q) => JSON.parse(q.body) as ReceivedEvent);

/** The events of one type that reached `path`, once `n` of them did. */
async function waitForEvents(r: Receiver, type: string, n: number, path = '/events'): Promise<ReceivedEvent[]> {
  return until(
    () => eventsOf(r, path).filter((e) => e.type === type),
    (found) => found.length >= n,
    `${n} ${type} event(s) at ${path}`,
  );
}

describe('event webhooks', () => {
  const engine = useEngine();

  const subscribe = async (url: string, events: string[], extra: Record<string, unknown> = {}) => {
    const res = await engine.t
      .http()
      .post('/v1/event-subscriptions')
      .set(bearer(engine.key))
      .send({ url, events, ...extra });
    if (res.status !== 201) throw new Error(`subscription failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: string; secret: string; url: string; events: string[] };
  };

  it('creates, lists, changes and deletes a subscription; the secret is shown once', async () => {
    const r = await engine.receiver();
    const created = await subscribe(r.urlFor('/events'), ['post.published'], { description: 'Slack relay', headers: { 'X-Token': 'abc' } });
    expect(created.secret).toMatch(/^whsec_/);
    expect(created).toMatchObject({
      url: r.urlFor('/events'),
      events: ['post.published'],
      description: 'Slack relay',
      headerNames: ['X-Token'],
    });

    const http = () => engine.t.http();
    const list = await http().get('/v1/event-subscriptions').set(bearer(engine.key)).expect(200);
    expect(list.body.nextCursor).toBeNull();
    expect(list.body.data.map((s: { id: string }) => s.id)).toContain(created.id);
    const one = await http().get(`/v1/event-subscriptions/${created.id}`).set(bearer(engine.key)).expect(200);
    expect(one.body).not.toHaveProperty('secret');
    expect(JSON.stringify(one.body)).not.toContain('abc');

    const changed = await http()
      .patch(`/v1/event-subscriptions/${created.id}`)
      .set(bearer(engine.key))
      .send({ events: ['post.failed', 'post.published'], paused: true })
      .expect(200);
    expect(changed.body).toMatchObject({ events: ['post.failed', 'post.published'], paused: true, status: 'disabled' });
    expect(changed.body).not.toHaveProperty('secret');
    const rotated = await http().post(`/v1/event-subscriptions/${created.id}/rotate-secret`).set(bearer(engine.key)).expect(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.secret);

    // An event endpoint is no account a person lists or posts to.
    const accounts = await http().get('/v1/accounts').set(bearer(engine.key)).expect(200);
    expect(accounts.body.data.map((a: { id: string }) => a.id)).not.toContain(created.id);
    await http().get(`/v1/accounts/${created.id}`).set(bearer(engine.key)).expect(404);
    const post = await http()
      .post('/v1/posts')
      .set(bearer(engine.key))
      .send({ text: 'to an endpoint', targets: [{ accountId: created.id }] })
      .expect(400);
    expect(post.body.message).toContain(created.id);

    await http().delete(`/v1/event-subscriptions/${created.id}`).set(bearer(engine.key)).expect(204);
    await http().get(`/v1/event-subscriptions/${created.id}`).set(bearer(engine.key)).expect(404);
  });

  it('refuses bad input with a 400 naming the field, and saves nothing', async () => {
    const http = () => engine.t.http();
    const before = (await http().get('/v1/event-subscriptions').set(bearer(engine.key)).expect(200)).body.data.length;
    const cases: [Record<string, unknown>, string][] = [
      [{ url: 'https://example.com/h', events: ['post.exploded'] }, 'events'],
      [{ url: 'https://example.com/h', events: [] }, 'events'],
      [{ url: 'https://example.com/h' }, 'events'],
      [{ url: 'ftp://example.com/h', events: ['post.failed'] }, 'url'],
      [{ url: 'https://example.com/h', events: ['post.failed'], colour: 'red' }, 'colour'],
      [{ url: 'https://example.com/h', events: ['post.failed'], headers: { 'webhook-id': 'x' } }, 'headers'],
    ];
    for (const [body, field] of cases) {
      const res = await http().post('/v1/event-subscriptions').set(bearer(engine.key)).send(body).expect(400);
      expect(res.body.message).toContain(field);
    }
    expect((await http().get('/v1/event-subscriptions').set(bearer(engine.key)).expect(200)).body.data).toHaveLength(before);
  });

  it('sends post.scheduled and post.published, signed, with the platform URL and an id to deduplicate on', async () => {
    const r = await engine.receiver((q) => (q.path === '/hook' ? { status: 200, body: { url: 'https://blog.example.com/p/9' } } : 200));
    const sub = await subscribe(r.urlFor('/events'), ['post.scheduled', 'post.published']);
    const account = await engine.account(r.urlFor('/hook'));
    const post = await engine.post({ text: 'Hello events', targets: [{ accountId: account.id }] });

    const [published] = await waitForEvents(r, 'post.published', 1);
    expect(published.data).toEqual({
      postId: post.id,
      jobId: post.jobs[0].id,
      accountId: account.id,
      provider: 'webhook',
      url: 'https://blog.example.com/p/9',
      remoteId: null,
    });
    const [scheduled] = await waitForEvents(r, 'post.scheduled', 1);
    expect(scheduled.data).toMatchObject({
      postId: post.id,
      targets: [{ jobId: post.jobs[0].id, accountId: account.id, provider: 'webhook', status: 'scheduled' }],
    });
    for (const q of r.requests.filter((x: ReceivedRequest) => x.path === '/events')) {
      verifySignature(sub.secret, q);
      const body = JSON.parse(q.body) as ReceivedEvent;
      expect(q.headers['webhook-id']).toBe(body.id);
      expect(q.headers['idempotency-key']).toBe(body.id);
      expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
    }

    // The deliveries, as the API lists them.
    const deliveries = await until(
      async () =>
        (await engine.t.http().get(`/v1/event-subscriptions/${sub.id}/deliveries`).set(bearer(engine.key)).expect(200)).body.data as {
          eventId: string;
          eventType: string;
          status: string;
          httpStatus: number | null;
          attempts: number;
        }[],
      (d) => d.length === 2 && d.every((x) => x.status === 'succeeded'),
      'both deliveries succeeded',
    );
    expect(deliveries.map((d) => d.eventType).sort()).toEqual(['post.published', 'post.scheduled']);
    expect(deliveries.map((d) => d.eventId).sort()).toEqual([published.id, scheduled.id].sort());
    expect(deliveries.every((d) => d.httpStatus === 200 && d.attempts === 1)).toBe(true);
  });

  it('sends post.failed when a job reaches the dead-letter queue, and a failed delivery can be sent again', async () => {
    let eventsAnswer = 400;
    const r = await engine.receiver((q) => (q.path === '/hook' ? { status: 422, body: { error: 'no' } } : eventsAnswer));
    const sub = await subscribe(r.urlFor('/events'), ['post.failed']);
    const account = await engine.account(r.urlFor('/hook'));
    const post = await engine.post({ text: 'Refused', targets: [{ accountId: account.id }] });
    await engine.waitForJob(post.jobs[0].id, (j) => j.status === 'dead');

    // The endpoint refused it (400: permanent): the delivery is dead, shown with its answer.
    const http = () => engine.t.http();
    const [dead] = await until(
      async () =>
        (await http().get(`/v1/event-subscriptions/${sub.id}/deliveries`).set(bearer(engine.key)).expect(200)).body.data as {
          id: string;
          status: string;
          httpStatus: number;
          eventId: string;
        }[],
      (d) => d.length === 1 && d[0].status === 'dead',
      'the delivery is dead',
    );
    expect(dead.httpStatus).toBe(400);
    // A delivery is a job: its attempts, as for any job.
    const asJob = await http().get(`/v1/jobs/${dead.id}`).set(bearer(engine.key)).expect(200);
    expect(asJob.body).toMatchObject({ id: dead.id, postId: null, accountId: sub.id, status: 'dead', idempotencyKey: dead.eventId });
    expect(asJob.body.attempts.map((a: { httpStatus: number }) => a.httpStatus)).toEqual([400]);
    // Not among the failed posts: it is the endpoint's.
    const dlq = await http().get('/v1/dlq').set(bearer(engine.key)).expect(200);
    expect(dlq.body.data.map((j: { id: string }) => j.id)).not.toContain(dead.id);

    eventsAnswer = 200;
    const again = await http().post(`/v1/event-subscriptions/${sub.id}/deliveries/${dead.id}/retry`).set(bearer(engine.key)).expect(200);
    // The answer is the delivery as read after the retry's commit: due now, so the worker of this
    // same process (woken right after that commit) may already hold it, or have sent it. Never
    // still dead.
    expect(['scheduled', 'in_progress', 'succeeded']).toContain(again.body.status);
    const received = await until(
      () => r.requests.filter((q) => q.path === '/events'),
      (q) => q.length === 2,
      'the event sent again',
    );
    const [first, second] = received.map((q) => JSON.parse(q.body) as ReceivedEvent);
    expect(second).toEqual(first);
    expect(second).toMatchObject({
      type: 'post.failed',
      data: { postId: post.id, jobId: post.jobs[0].id, accountId: account.id, deadReason: 'permanent', errorClass: 'permanent' },
    });
    await http().post(`/v1/event-subscriptions/${sub.id}/deliveries/${dead.id}/retry`).set(bearer(engine.key)).expect(409);
  });

  it('sends account.needs_reauth when the platform refuses the credentials, and account.recovered when they are fixed', async () => {
    const r = await engine.receiver((q) => (q.path === '/hook' ? 401 : 200));
    await subscribe(r.urlFor('/events'), ['account.needs_reauth', 'account.recovered']);
    const account = await engine.account(r.urlFor('/hook'), { name: 'Locked blog' });
    const post = await engine.post({ text: 'Refused credentials', targets: [{ accountId: account.id }] });
    await engine.waitForJob(post.jobs[0].id, (j) => j.status === 'paused');
    const [needs] = await waitForEvents(r, 'account.needs_reauth', 1);
    expect(needs.data).toMatchObject({ accountId: account.id, provider: 'webhook', name: 'Locked blog', status: 'needs_reauth' });

    await engine.t.http().patch(`/v1/accounts/${account.id}`).set(bearer(engine.key)).send({ status: 'active' }).expect(200);
    const [recovered] = await waitForEvents(r, 'account.recovered', 1);
    expect(recovered.data).toMatchObject({ accountId: account.id, status: 'active' });
  });

  it('sends post.approval_requested, post.approved (then post.scheduled) and post.rejected with the approval steps', async () => {
    const r = await engine.receiver();
    await subscribe(r.urlFor('/approvals'), ['post.approval_requested', 'post.approved', 'post.rejected', 'post.scheduled']);
    const http = () => engine.t.http();
    const editor = (await http().post('/v1/api-keys').set(bearer(engine.key)).send({ name: 'writer', role: 'editor' }).expect(201)).body
      .key as string;
    await http().put('/v1/settings/approvals').set(bearer(engine.key)).send({ mode: 'editors', clientApproval: false }).expect(200);
    try {
      const account = await engine.account(r.urlFor('/hook'));
      const later = '2030-01-01T09:00:00.000Z';
      const one = (
        await http()
          .post('/v1/posts')
          .set(bearer(editor))
          .send({ text: 'Needs a yes', scheduledAt: later, targets: [{ accountId: account.id }] })
          .expect(201)
      ).body;
      const two = (
        await http()
          .post('/v1/posts')
          .set(bearer(editor))
          .send({ text: 'Needs a no', scheduledAt: later, targets: [{ accountId: account.id }] })
          .expect(201)
      ).body;
      expect(one.status).toBe('pending_approval');
      const requested = await waitForEvents(r, 'post.approval_requested', 2, '/approvals');
      expect(requested.map((e) => e.data.postId).sort()).toEqual([one.id, two.id].sort());
      expect(requested[0].data.by).toMatchObject({ kind: 'key' });

      await http().post(`/v1/posts/${one.id}/approve`).set(bearer(engine.key)).send({}).expect(200);
      await http().post(`/v1/posts/${two.id}/reject`).set(bearer(engine.key)).send({ comment: 'Not this week' }).expect(200);
      const [approved] = await waitForEvents(r, 'post.approved', 1, '/approvals');
      expect(approved.data).toMatchObject({ postId: one.id, by: { kind: 'key' } });
      const [scheduled] = await waitForEvents(r, 'post.scheduled', 1, '/approvals');
      expect(scheduled.data).toMatchObject({ postId: one.id, scheduledAt: later });
      const [rejected] = await waitForEvents(r, 'post.rejected', 1, '/approvals');
      expect(rejected.data).toMatchObject({ postId: two.id, comment: 'Not this week' });
    } finally {
      await http().put('/v1/settings/approvals').set(bearer(engine.key)).send({ mode: 'off', clientApproval: false }).expect(200);
    }
  });

  it('writes no event for a change that rolled back, and one for a change that committed', async () => {
    const r = await engine.receiver();
    const sub = await subscribe(r.urlFor('/rollback'), ['post.approved']);
    const events = engine.t.app.get(EventsService, { strict: false });
    const lifecycle = engine.t.app.get(JobLifecycle, { strict: false });
    const [{ workspace_id: workspaceId }] = await engine.sql<{ workspace_id: string }>(`SELECT workspace_id FROM accounts WHERE id = $1`, [
      sub.id,
    ]);
    const step = (postId: string) => ({ workspaceId, postId, actor: null, now: new Date() });
    await expect(
      lifecycle.transaction(async (tx) => {
        expect(await events.approval(tx, 'post.approved', step('rolled-back'))).toBeGreaterThanOrEqual(1);
        throw new Error('the change failed after its event was written');
      }),
    ).rejects.toThrow('the change failed');
    expect(await lifecycle.transaction((tx) => events.approval(tx, 'post.approved', step('committed')))).toBeGreaterThanOrEqual(1);

    const [received] = await waitForEvents(r, 'post.approved', 1, '/rollback');
    expect(received.data.postId).toBe('committed');
    const rows = await engine.sql<{ post_id: string }>(
      `SELECT payload->'event'->'data'->>'postId' AS post_id FROM jobs WHERE account_id = $1`,
      [sub.id],
    );
    expect(rows).toEqual([{ post_id: 'committed' }]);
  });

  it('sends nothing a subscription did not ask for, and nothing to another workspace', async () => {
    const r = await engine.receiver();
    const onlyFailed = await subscribe(r.urlFor('/only-failed'), ['post.failed']);
    const published = await subscribe(r.urlFor('/published'), ['post.published']);
    const account = await engine.account(r.urlFor('/hook'));
    const post = await engine.post({ text: 'Fine', targets: [{ accountId: account.id }] });
    await engine.waitForJob(post.jobs[0].id, (j) => j.status === 'succeeded');
    await waitForEvents(r, 'post.published', 1, '/published');

    // Another workspace's post: its events are its own.
    const other = await engine.t.http().post('/v1/workspaces').set(bearer(engine.key)).send({ name: 'Elsewhere' }).expect(201);
    const otherKey = other.body.apiKey.key as string;
    const otherAccount = await engine.t
      .http()
      .post('/v1/accounts')
      .set(bearer(otherKey))
      .send({ provider: 'webhook', name: 'Other blog', config: { url: r.urlFor('/other-hook') } })
      .expect(201);
    const otherPost = await engine.t
      .http()
      .post('/v1/posts')
      .set(bearer(otherKey))
      .send({ text: 'Elsewhere', targets: [{ accountId: otherAccount.body.id }] })
      .expect(201);
    await waitForPost(engine.t, otherKey, otherPost.body.id, (post) => post.status === 'published');
    // Events are written in the transaction that ends the job: once both posts are published,
    // every delivery either post gave rise to exists.
    const deliveries = await engine.sql<{ account_id: string; post_id: string }>(
      `SELECT account_id, payload->'event'->'data'->>'postId' AS post_id FROM jobs WHERE account_id = ANY($1::uuid[])`,
      [[onlyFailed.id, published.id]],
    );
    expect(deliveries).toEqual([{ account_id: published.id, post_id: post.id }]);
    expect(r.requests.filter((q) => q.path === '/only-failed')).toEqual([]);
  });

  it('a failing event endpoint opens its own circuit while posts to the same host keep their pace', async () => {
    const r = await engine.receiver((q) => (q.path === '/events' ? 503 : 200));
    const sub = await subscribe(r.urlFor('/events'), ['post.published']);
    const account = await engine.account(r.urlFor('/hook'));
    const jobIds = await engine.postMany(account.id, 30, 'Steady');
    const jobs = await Promise.all(jobIds.map((id) => engine.waitForJob(id, (j) => j.status === 'succeeded')));
    // Every post went out at its first attempt: the endpoint's failures never held them back.
    expect(jobs.every((j) => j.attempts.length === 1)).toBe(true);
    const blog = await engine.accountView(account.id);
    expect(blog.circuit).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
    const endpoint = await until(
      async () => (await engine.t.http().get(`/v1/event-subscriptions/${sub.id}`).set(bearer(engine.key)).expect(200)).body,
      (e: { circuit: { state: string } }) => e.circuit.state === 'open',
      "the endpoint's circuit open",
    );
    expect((endpoint as unknown as { circuit: { consecutiveFailures: number } }).circuit.consecutiveFailures).toBeGreaterThanOrEqual(5);
    const deliveries = (await engine.t.http().get(`/v1/event-subscriptions/${sub.id}/deliveries`).set(bearer(engine.key)).expect(200)).body
      .data as { status: string; httpStatus: number | null }[];
    expect(deliveries).toHaveLength(30);
    expect(deliveries.some((d) => d.httpStatus === 503)).toBe(true);
    expect(deliveries.every((d) => d.status === 'scheduled' || d.status === 'in_progress')).toBe(true);
  });

  it('a burst of posts published gives one post.published per post, with no duplicate id', async () => {
    const n = 300;
    const r = await engine.receiver();
    const sub = await subscribe(r.urlFor('/burst'), ['post.published']);
    const account = await engine.account(r.urlFor('/hook'));
    const jobIds = await engine.postMany(account.id, n, 'Burst');
    // Every delivery written is delivered (the endpoint's jobs, straight from the database).
    const rows = await until(
      () => engine.sql<{ event_id: string; status: string }>(`SELECT event_id, status FROM jobs WHERE account_id = $1`, [sub.id]),
      (d) => d.length >= n && d.every((x) => x.status === 'succeeded'),
      `${n} deliveries succeeded`,
    );
    expect(rows).toHaveLength(n);
    expect(new Set(rows.map((x) => x.event_id)).size).toBe(n);
    const all = eventsOf(r, '/burst');
    expect(all).toHaveLength(n);
    expect(new Set(all.map((e) => e.id))).toEqual(new Set(rows.map((x) => x.event_id)));
    expect(new Set(all.map((e) => e.data.jobId as string))).toEqual(new Set(jobIds));
  });
});
