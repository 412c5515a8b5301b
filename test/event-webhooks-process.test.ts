import { createTestDatabase, withClient } from './support/database';
import { bearer } from './support/config';
import { pollUntil } from './support/poll';
import { ReceivedRequest } from './support/receiver';
import { api, SERVICE_KEY, useServices } from './support/service';

interface ReceivedEvent {
  id: string;
  type: string;
  data: { postId?: string };
}

const POSTS = 20;

/**
 * Events are written in the transaction of the change they report, and delivered by the engine:
 * a real service process killed (SIGKILL) while events are pending loses none of them, and a post
 * whose transaction rolled back after its INSERT ran sends none.
 */
describe('event webhooks across a crash', () => {
  const services = useServices();

  it('delivers every event exactly once (by webhook-id) after a SIGKILL, and none for a post that rolled back', async () => {
    const { url: databaseUrl } = await createTestDatabase();
    // A post whose text is ROLLBACK ME fails at COMMIT, after the statement that writes it, its
    // jobs and its events ran: a deferred constraint trigger, as any failure at commit would.
    await withClient(databaseUrl, async (db) => {
      await db.query(`CREATE FUNCTION test_refuse_post() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.text = 'ROLLBACK ME' THEN RAISE EXCEPTION 'forced rollback at commit'; END IF; RETURN NULL; END $$`);
      await db.query(`CREATE CONSTRAINT TRIGGER test_refuse_post AFTER INSERT ON posts DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION test_refuse_post()`);
    });
    // Posts are published at once; the event endpoint answers slowly, so events are pending when the process dies.
    const receiver = await services.receiver((q) => (q.path === '/events' ? { status: 200, delayMs: 300 } : 200));
    const first = await services.start(databaseUrl);

    const sub = await api<{ id: string; secret: string }>(first, SERVICE_KEY, 'POST', '/v1/event-subscriptions', {
      url: receiver.urlFor('/events'),
      events: ['post.scheduled', 'post.published'],
    });
    expect(sub.status).toBe(201);
    const [accountId] = await services.accounts(first, receiver.urlFor('/hook'), 1);

    const refused = await fetch(`${first.url}/v1/posts`, {
      method: 'POST',
      headers: { ...bearer(SERVICE_KEY), 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'ROLLBACK ME', targets: [{ accountId }] }),
    });
    expect(refused.status).toBe(500);

    const postIds: string[] = [];
    for (let i = 0; i < POSTS; i++) {
      const res = await api<{ id: string }>(first, SERVICE_KEY, 'POST', '/v1/posts', { text: `Post ${i + 1}`, targets: [{ accountId }] });
      expect(res.status).toBe(201);
      postIds.push(res.body.id);
    }
    // Some events arrived, most are still waiting or in flight: now the process dies.
    await pollUntil(
      'the first events',
      () => receiver.requests.filter((q) => q.path === '/events').length,
      (n) => n >= 3,
    );
    await first.stop('SIGKILL');
    const beforeRestart = receiver.requests.filter((q) => q.path === '/events').length;
    expect(beforeRestart).toBeLessThan(2 * POSTS);

    await services.start(databaseUrl);
    const expected = new Set(postIds.flatMap((id) => [`post.scheduled ${id}`, `post.published ${id}`]));
    const events = (requests: ReceivedRequest[]) =>
      requests
        .filter((q) => q.path === '/events')
        .map((q) => ({ header: String(q.headers['webhook-id']), event: JSON.parse(q.body) as ReceivedEvent }));
    const arrived = await pollUntil(
      'every event of every post',
      () => events(receiver.requests),
      (list) => new Set(list.map((e) => `${e.event.type} ${e.event.data.postId}`)).size >= expected.size,
      90_000,
    );
    // Deduplicated by webhook-id (the event id), every event is there exactly once, and nothing else.
    const byId = new Map(arrived.map((e) => [e.header, e.event]));
    expect([...byId.values()].map((e) => `${e.type} ${e.data.postId}`).sort()).toEqual([...expected].sort());
    for (const e of arrived) expect(e.header).toBe(e.event.id);
    // The rolled-back post left nothing: no post, no job, no event.
    const rows = await withClient(databaseUrl, async (db) => ({
      posts: (await db.query(`SELECT count(*)::int AS n FROM posts WHERE text = 'ROLLBACK ME'`)).rows[0].n as number,
      deliveries: (await db.query(`SELECT count(*)::int AS n FROM jobs WHERE event_id IS NOT NULL`)).rows[0].n as number,
    }));
    expect(rows).toEqual({ posts: 0, deliveries: expected.size });
  }, 180_000);
});
