import { Client } from 'pg';
import { nextFreeSlot, QueueSchedule } from '../src/posting-queue/queue-slots';
import { bootTestApp, TestApp } from './support/app';
import { bearer } from './support/config';
import { withClient } from './support/database';
import { waitUntil } from './support/poll';
import { createWebhookAccount } from './support/engine';

/**
 * The posting queue over HTTP (docs/api.md "The posting queue"): the workspace's and an
 * account's slots, `queue: true` on POST and PATCH /v1/posts taking the next free slot for every
 * target, slots given back by a cancel or another time, and posts queued at once never sharing
 * a slot (the database's UNIQUE, across the pool's connections). The worker is off: queued posts
 * are in the future anyway.
 */

interface PostAnswer {
  id: string;
  status: string;
  scheduledAt: string | null;
  queueSlot: { at: string; timezone: string; day: string; time: string; localTime: string; moved: boolean } | null;
  jobs: { accountId: string; status: string }[];
}

const EVERY_DAY = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const DAILY: QueueSchedule = {
  timezone: 'Europe/Berlin',
  slots: EVERY_DAY.flatMap((day) => [
    { day, time: '09:00' },
    { day, time: '15:30' },
  ]),
};

describe('the posting queue', () => {
  let t: TestApp;
  let a: string;
  let b: string;
  let c: string;
  let other: { key: string; account: string };

  const http = () => t.http();
  const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> =>
    withClient(t.databaseUrl, async (db: Client) => (await db.query(text, params)).rows as T[]);
  const putQueue = (body: unknown, key = t.adminKey) =>
    http()
      .put('/v1/settings/queue')
      .set(bearer(key))
      .send(body as object);
  const queuePost = (targets: string[], extra: Record<string, unknown> = {}) =>
    http()
      .post('/v1/posts')
      .set(bearer(t.adminKey))
      .send({ text: 'queued', targets: targets.map((accountId) => ({ accountId })), queue: true, ...extra });
  const takenSlots = () => q<{ n: number }>(`SELECT count(*)::int AS n FROM posting_queue_slots`).then((r) => r[0].n);
  /** What the pure search answers for these targets right now, nothing else taken but `taken`. */
  const expectedNext = (schedules: [string, QueueSchedule][], taken: [string, string[]][] = []) => {
    const r = nextFreeSlot({
      now: new Date(),
      targets: schedules.map(([accountId, schedule]) => ({ accountId, schedule })),
      taken: new Map(taken.map(([id, ats]) => [id, new Set(ats.map((x) => Date.parse(x)))])),
    });
    if (!r.ok) throw new Error(`no slot expected: ${r.reason}`);
    return r.at.toISOString();
  };

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    a = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/a')).id;
    b = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/b')).id;
    c = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/c')).id;
    const ws = await http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name: 'Other tenant' }).expect(201);
    const key = ws.body.apiKey.key as string;
    other = { key, account: (await createWebhookAccount(t, key, 'http://127.0.0.1:9/other')).id };
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    await q(`DELETE FROM posting_queue_slots`);
    await q(`DELETE FROM posting_queue_schedules`);
  });

  describe('slots', () => {
    it('has none until the workspace saves them, and answers them in week order', async () => {
      expect((await http().get('/v1/settings/queue').set(bearer(t.adminKey)).expect(200)).body).toEqual({ timezone: 'UTC', slots: [] });
      const saved = await putQueue({
        timezone: 'Europe/Berlin',
        slots: [
          { day: 'fri', time: '17:00' },
          { day: 'mon', time: '09:00' },
        ],
      }).expect(200);
      const expected = {
        timezone: 'Europe/Berlin',
        slots: [
          { day: 'mon', time: '09:00' },
          { day: 'fri', time: '17:00' },
        ],
      };
      expect(saved.body).toEqual(expected);
      expect((await http().get('/v1/settings/queue').set(bearer(t.adminKey)).expect(200)).body).toEqual(expected);
      // Another workspace has its own (none).
      expect((await http().get('/v1/settings/queue').set(bearer(other.key)).expect(200)).body).toEqual({ timezone: 'UTC', slots: [] });
    });

    it('refuses a bad schedule with a 400 naming the field, and keeps the one before', async () => {
      await putQueue({ timezone: 'UTC', slots: [{ day: 'mon', time: '08:00' }] }).expect(200);
      const cases: [unknown, RegExp][] = [
        [{ timezone: 'Mars/Olympus', slots: [] }, /^timezone: "Mars\/Olympus" is not an IANA time zone name/],
        [{ timezone: '+02:00', slots: [] }, /^timezone:/],
        [{ timezone: 'UTC', slots: [{ day: 'monday', time: '09:00' }] }, /^slots\.0\.day must be one of mon, tue, wed, thu, fri, sat, sun/],
        [{ timezone: 'UTC', slots: [{ day: 'mon', time: '24:00' }] }, /^slots\.0\.time must be a time HH:MM from 00:00 to 23:59/],
        [{ timezone: 'UTC', slots: [{ day: 'mon', time: 900 }] }, /^slots\.0\.time must be a time HH:MM/],
        [
          {
            timezone: 'UTC',
            slots: [
              { day: 'tue', time: '09:00' },
              { day: 'tue', time: '09:00' },
            ],
          },
          /^slots\.1 repeats tue 09:00 \(slots\.0\)/,
        ],
        [
          {
            timezone: 'UTC',
            slots: Array.from({ length: 101 }, (_, i) => ({ day: 'mon', time: `00:${String(i % 60).padStart(2, '0')}` })),
          },
          /^slots: at most 100/,
        ],
        [{ timezone: 'UTC', slots: [{ day: 'mon', time: '09:00', note: 'x' }] }, /^slots\.0\.note is not allowed \(unknown field\)/],
        [{ timezone: 'UTC' }, /^slots must be a list/],
        [{ slots: [] }, /^timezone must be an IANA time zone name/],
      ];
      for (const [body, message] of cases) {
        const res = await putQueue(body);
        expect({ status: res.status, message: res.body.message as string }).toEqual({
          status: 400,
          message: expect.stringMatching(message),
        });
      }
      expect((await http().get('/v1/settings/queue').set(bearer(t.adminKey)).expect(200)).body).toEqual({
        timezone: 'UTC',
        slots: [{ day: 'mon', time: '08:00' }],
      });
    });

    it("gives an account its own slots, which replace the workspace's for it, and DELETE gives them back", async () => {
      await putQueue({ timezone: 'UTC', slots: [{ day: 'mon', time: '08:00' }] }).expect(200);
      const path = `/v1/accounts/${a}/queue`;
      expect((await http().get(path).set(bearer(t.adminKey)).expect(200)).body).toEqual({
        timezone: 'UTC',
        slots: [{ day: 'mon', time: '08:00' }],
        source: 'workspace',
      });
      const own = { timezone: 'America/New_York', slots: [{ day: 'wed', time: '12:00' }] };
      expect((await http().put(path).set(bearer(t.adminKey)).send(own).expect(200)).body).toEqual({ ...own, source: 'account' });
      expect((await http().get(path).set(bearer(t.adminKey)).expect(200)).body).toEqual({ ...own, source: 'account' });
      // The workspace's and the other accounts' are unchanged.
      expect((await http().get(`/v1/accounts/${b}/queue`).set(bearer(t.adminKey)).expect(200)).body.source).toBe('workspace');
      expect((await http().delete(path).set(bearer(t.adminKey)).expect(200)).body).toEqual({
        timezone: 'UTC',
        slots: [{ day: 'mon', time: '08:00' }],
        source: 'workspace',
      });
      // Another workspace's account is unknown here, whatever the method.
      await http().get(`/v1/accounts/${other.account}/queue`).set(bearer(t.adminKey)).expect(404);
      await http().put(`/v1/accounts/${other.account}/queue`).set(bearer(t.adminKey)).send(own).expect(404);
      await http().delete(`/v1/accounts/${other.account}/queue`).set(bearer(t.adminKey)).expect(404);
    });
  });

  describe('queue: true', () => {
    it('takes the next free slot, says which, and the next post takes the one after', async () => {
      await putQueue(DAILY).expect(200);
      const first = expectedNext([[a, DAILY]]);
      const p1 = (await queuePost([a]).expect(201)).body as PostAnswer;
      expect(p1).toMatchObject({ status: 'scheduled', scheduledAt: first });
      expect(p1.queueSlot).toEqual({
        at: first,
        timezone: 'Europe/Berlin',
        day: expect.any(String),
        time: expect.stringMatching(/^(09:00|15:30)$/),
        localTime: p1.queueSlot?.time,
        moved: false,
      });
      const second = expectedNext([[a, DAILY]], [[a, [first]]]);
      const p2 = (await queuePost([a]).expect(201)).body as PostAnswer;
      expect(p2.scheduledAt).toBe(second);
      expect(Date.parse(second)).toBeGreaterThan(Date.parse(first));
      // The slot is on the post when read back, and on the list.
      expect((await http().get(`/v1/posts/${p1.id}`).set(bearer(t.adminKey)).expect(200)).body.queueSlot).toEqual(p1.queueSlot);
      const listed = (await http().get('/v1/posts').set(bearer(t.adminKey)).expect(200)).body.data as PostAnswer[];
      expect(listed.find((p) => p.id === p2.id)?.queueSlot?.at).toBe(second);
      // A post given a time has none.
      const timed = await http()
        .post('/v1/posts')
        .set(bearer(t.adminKey))
        .send({ text: 'timed', targets: [{ accountId: a }], scheduledAt: '2031-01-01T00:00:00Z' })
        .expect(201);
      expect(timed.body.queueSlot).toBeNull();
    });

    it('takes the first slot free on every target: a slot taken on one of them is skipped', async () => {
      await putQueue(DAILY).expect(200);
      const onB = (await queuePost([b]).expect(201)).body as PostAnswer;
      const both = (await queuePost([a, b]).expect(201)).body as PostAnswer;
      expect(both.scheduledAt).toBe(
        expectedNext(
          [
            [a, DAILY],
            [b, DAILY],
          ],
          [[b, [onB.scheduledAt!]]],
        ),
      );
      expect(Date.parse(both.scheduledAt!)).toBeGreaterThan(Date.parse(onB.scheduledAt!));
      // a's first slot is still free: a post to a alone takes it.
      const onA = (await queuePost([a]).expect(201)).body as PostAnswer;
      expect(onA.scheduledAt).toBe(onB.scheduledAt);
      expect(await q(`SELECT count(*)::int AS n FROM posting_queue_slots WHERE post_id = $1`, [both.id])).toEqual([{ n: 2 }]);
    });

    it("follows an account's own slots: only instants that are slots for every target", async () => {
      await putQueue(DAILY).expect(200);
      // 08:00 in London is 09:00 in Berlin (both on winter or both on summer time).
      const london: QueueSchedule = { timezone: 'Europe/London', slots: [{ day: 'thu', time: '08:00' }] };
      await http().put(`/v1/accounts/${c}/queue`).set(bearer(t.adminKey)).send(london).expect(200);
      const post = (await queuePost([a, c]).expect(201)).body as PostAnswer;
      expect(post.scheduledAt).toBe(
        expectedNext([
          [a, DAILY],
          [c, london],
        ]),
      );
      const slots = await q<{ accountId: string; timezone: string; day: string; time: string }>(
        `SELECT account_id AS "accountId", timezone, day, time FROM posting_queue_slots WHERE post_id = $1 ORDER BY timezone`,
        [post.id],
      );
      expect(slots).toEqual([
        { accountId: a, timezone: 'Europe/Berlin', day: 'thu', time: '09:00' },
        { accountId: c, timezone: 'Europe/London', day: 'thu', time: '08:00' },
      ]);
    });

    it('says why there is no slot, writes nothing, and refuses queue with scheduledAt or on a new draft', async () => {
      const before = await q(`SELECT (SELECT count(*)::int FROM posts) AS posts, (SELECT count(*)::int FROM posting_queue_slots) AS slots`);
      let res = await queuePost([a]).expect(409);
      expect(res.body.message).toMatch(/^queue: the posting queue has no slots; set them with PUT \/v1\/settings\/queue/);
      await putQueue(DAILY).expect(200);
      await http()
        .put(`/v1/accounts/${c}/queue`)
        .set(bearer(t.adminKey))
        .send({ timezone: 'Europe/Berlin', slots: [{ day: 'mon', time: '10:00' }] })
        .expect(200);
      res = await queuePost([a, c]).expect(409);
      expect(res.body.message).toMatch(/^queue: the targets' queues share no slot within 366 days/);
      await http().put(`/v1/accounts/${c}/queue`).set(bearer(t.adminKey)).send({ timezone: 'UTC', slots: [] }).expect(200);
      res = await queuePost([a, c]).expect(409);
      expect(res.body.message).toBe(
        `queue: no queue slots for account(s) ${c}; set them with PUT /v1/settings/queue or PUT /v1/accounts/{id}/queue, or give scheduledAt`,
      );
      res = await queuePost([a], { publishBy: new Date(Date.now() + 60_000).toISOString() }).expect(409);
      expect(res.body.message).toMatch(/^queue: no free queue slot before publishBy/);
      res = await queuePost([a], { scheduledAt: '2031-01-01T00:00:00Z' }).expect(400);
      expect(res.body.message).toMatch(/^queue and scheduledAt conflict/);
      res = await queuePost([a], { status: 'draft' }).expect(400);
      expect(res.body.message).toMatch(
        /^a draft has no time: leave out queue \(queue it when scheduling it: PATCH \/v1\/posts\/\{id\} with queue: true\)/,
      );
      res = await queuePost([a], { queue: 'yes' }).expect(400);
      expect(res.body.message).toBe('queue must be true or false');
      expect(
        await q(`SELECT (SELECT count(*)::int FROM posts) AS posts, (SELECT count(*)::int FROM posting_queue_slots) AS slots`),
      ).toEqual(before);
    });

    it('gives the slot back when the post is cancelled or given another time, and keeps it for the same time', async () => {
      await putQueue(DAILY).expect(200);
      const p1 = (await queuePost([a]).expect(201)).body as PostAnswer;
      await http().delete(`/v1/posts/${p1.id}`).set(bearer(t.adminKey)).expect(200);
      expect((await http().get(`/v1/posts/${p1.id}`).set(bearer(t.adminKey)).expect(200)).body).toMatchObject({
        status: 'cancelled',
        queueSlot: null,
      });
      const p2 = (await queuePost([a]).expect(201)).body as PostAnswer;
      expect(p2.scheduledAt).toBe(p1.scheduledAt);

      // The same time again (a form sending the time back) keeps the slot; another time frees it.
      let patched = await http()
        .patch(`/v1/posts/${p2.id}`)
        .set(bearer(t.adminKey))
        .send({ text: 'edited', scheduledAt: p2.scheduledAt })
        .expect(200);
      expect(patched.body.queueSlot).toEqual(p2.queueSlot);
      patched = await http().patch(`/v1/posts/${p2.id}`).set(bearer(t.adminKey)).send({ scheduledAt: '2031-06-01T10:00:00Z' }).expect(200);
      expect(patched.body).toMatchObject({ scheduledAt: '2031-06-01T10:00:00.000Z', queueSlot: null });
      const p3 = (await queuePost([a]).expect(201)).body as PostAnswer;
      expect(p3.scheduledAt).toBe(p1.scheduledAt);

      // queue: true on a scheduled post moves it to the next free slot (its own given back first).
      patched = await http().patch(`/v1/posts/${p2.id}`).set(bearer(t.adminKey)).send({ queue: true }).expect(200);
      expect(patched.body.scheduledAt).toBe(expectedNext([[a, DAILY]], [[a, [p3.scheduledAt!]]]));
      expect(patched.body.jobs[0]).toMatchObject({ status: 'scheduled', nextAttemptAt: patched.body.scheduledAt });
      await http()
        .patch(`/v1/posts/${p2.id}`)
        .set(bearer(t.adminKey))
        .send({ queue: true, scheduledAt: '2031-06-01T10:00:00Z' })
        .expect(400);
      expect(await takenSlots()).toBe(2);
    });

    it('schedules a draft into the queue with PATCH { queue: true }', async () => {
      await putQueue(DAILY).expect(200);
      const draft = await http()
        .post('/v1/posts')
        .set(bearer(t.adminKey))
        .send({ text: 'draft', targets: [{ accountId: a }, { accountId: b }], status: 'draft' })
        .expect(201);
      const res = await http().patch(`/v1/posts/${draft.body.id}`).set(bearer(t.adminKey)).send({ queue: true }).expect(200);
      expect(res.body).toMatchObject({
        status: 'scheduled',
        scheduledAt: expectedNext([
          [a, DAILY],
          [b, DAILY],
        ]),
        draftTargets: null,
      });
      expect(res.body.queueSlot.at).toBe(res.body.scheduledAt);
      expect(res.body.jobs).toHaveLength(2);
      expect(await takenSlots()).toBe(2);
    });

    /**
     * Another connection takes `slot` on `account` in a transaction it holds open; `request` is sent
     * meanwhile, and (once PostgreSQL shows it waiting on that row's unique index) the other
     * transaction commits: the request's insert then fails on the UNIQUE and it must take the next slot.
     */
    async function raceAgainst(account: string, slot: string, request: () => Promise<{ status: number; body: PostAnswer }>) {
      const holder = await q<{ id: string }>(`SELECT id FROM posts ORDER BY created_at LIMIT 1`);
      const ws = await q<{ w: string }>(`SELECT workspace_id AS w FROM accounts WHERE id = $1`, [account]);
      return withClient(t.databaseUrl, async (other: Client) => {
        await other.query('BEGIN');
        await other.query(
          `INSERT INTO posting_queue_slots (workspace_id, account_id, slot_at, post_id, timezone, day, time, local_time)
           VALUES ($1, $2, $3, $4, 'Europe/Berlin', 'mon', '09:00', '09:00')`,
          [ws[0].w, account, slot, holder[0].id],
        );
        const answer = request();
        await waitUntil(
          async () =>
            // (the statement's text may be cut short in pg_stat_activity: the session waiting on a lock is enough)
            (await q(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).length > 0,
          10_000,
          'the queued post to wait on the slot the other transaction holds',
        );
        await other.query('COMMIT');
        return answer;
      });
    }

    it('takes the next slot when another transaction commits the one it chose first (POST: the statement fails whole, then again)', async () => {
      await putQueue(DAILY).expect(200);
      await http()
        .post('/v1/posts')
        .set(bearer(t.adminKey))
        .send({ text: 'holder', targets: [{ accountId: c }], scheduledAt: '2031-01-01T00:00:00Z' })
        .expect(201);
      const first = expectedNext([[a, DAILY]]);
      const posts = () => q<{ n: number }>(`SELECT count(*)::int AS n FROM posts`).then((r) => r[0].n);
      const before = await posts();
      const res = await raceAgainst(a, first, () => queuePost([a]).then((r) => ({ status: r.status, body: r.body as PostAnswer })));
      expect(res.status).toBe(201);
      expect(res.body.scheduledAt).toBe(expectedNext([[a, DAILY]], [[a, [first]]]));
      // One post written (the failed statement left nothing), its slot the second.
      expect(await posts()).toBe(before + 1);
      expect(await q(`SELECT slot_at AS at FROM posting_queue_slots WHERE post_id = $1`, [res.body.id])).toEqual([
        { at: new Date(res.body.scheduledAt!) },
      ]);
    });

    it('takes the next slot when another transaction commits the one it chose first (PATCH of a draft: behind a savepoint)', async () => {
      await putQueue(DAILY).expect(200);
      const draft = await http()
        .post('/v1/posts')
        .set(bearer(t.adminKey))
        .send({ text: 'draft', targets: [{ accountId: b }], status: 'draft' })
        .expect(201);
      const first = expectedNext([[b, DAILY]]);
      const res = await raceAgainst(b, first, () =>
        http()
          .patch(`/v1/posts/${draft.body.id}`)
          .set(bearer(t.adminKey))
          .send({ queue: true })
          .then((r) => ({ status: r.status, body: r.body as PostAnswer })),
      );
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'scheduled', scheduledAt: expectedNext([[b, DAILY]], [[b, [first]]]) });
      expect(res.body.queueSlot?.at).toBe(res.body.scheduledAt);
    });

    it('never gives one slot to two posts queued at the same moment (20 at once, over the pool’s connections)', async () => {
      await putQueue(DAILY).expect(200);
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => queuePost(i % 2 ? [a, b] : [a])));
      expect(answers.map((r) => r.status)).toEqual(Array(20).fill(201));
      const times = answers.map((r) => (r.body as PostAnswer).scheduledAt);
      expect(new Set(times).size).toBe(20);
      // Together they fill the first 20 slots of a, in order of nothing but the database's.
      const rows = await q<{ n: number; distinct: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT slot_at)::int AS distinct FROM posting_queue_slots WHERE account_id = $1`,
        [a],
      );
      expect(rows).toEqual([{ n: 20, distinct: 20 }]);
      const jobsAt = await q<{ n: number }>(
        `SELECT count(*)::int AS n FROM posts p JOIN posting_queue_slots s ON s.post_id = p.id WHERE p.scheduled_at <> s.slot_at`,
      );
      expect(jobsAt).toEqual([{ n: 0 }]);
    });
  });
});
