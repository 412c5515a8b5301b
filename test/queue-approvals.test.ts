import { bootTestApp, TestApp } from './support/app';
import { bearer } from './support/config';
import { createWebhookAccount } from './support/engine';

/**
 * The posting queue and approvals together (docs/api.md "The posting queue", "Approvals"): a
 * queued post that waits for approval keeps its slot while it waits (a post queued after it takes
 * the next one), approval writes its jobs at that slot, and a post sent back to draft gives its
 * slot back. The worker is off: jobs stay as written.
 */
interface PostAnswer {
  id: string;
  status: string;
  scheduledAt: string | null;
  queueSlot: { at: string } | null;
  jobs: { nextAttemptAt: string | null }[];
}

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** The next `n` instants at 09:00 UTC strictly after `now`. */
function nextNines(now: Date, n: number): string[] {
  const out: string[] = [];
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 9));
  if (d.getTime() <= now.getTime()) d.setUTCDate(d.getUTCDate() + 1);
  for (let i = 0; i < n; i++) {
    out.push(d.toISOString());
    d.setUTCDate(d.getUTCDate() + 1);
  }
  return out;
}

describe('the posting queue under approvals', () => {
  let t: TestApp;
  let owner: string;
  let editor: string;
  let account: string;

  const queued = async (key: string, text: string): Promise<PostAnswer> => {
    const res = await t
      .http()
      .post('/v1/posts')
      .set(bearer(key))
      .send({ text, targets: [{ accountId: account }], queue: true });
    expect(res.status).toBe(201);
    return res.body as PostAnswer;
  };
  const get = async (id: string): Promise<PostAnswer> =>
    (await t.http().get(`/v1/posts/${id}`).set(bearer(owner)).expect(200)).body as PostAnswer;

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    owner = t.adminKey;
    editor = (await t.http().post('/v1/api-keys').set(bearer(owner)).send({ name: 'editor', role: 'editor' }).expect(201)).body
      .key as string;
    account = (await createWebhookAccount(t, owner, 'http://127.0.0.1:9/hook')).id;
    await t
      .http()
      .put('/v1/settings/queue')
      .set(bearer(owner))
      .send({ timezone: 'UTC', slots: DAYS.map((day) => ({ day, time: '09:00' })) })
      .expect(200);
    await t.http().put('/v1/settings/approvals').set(bearer(owner)).send({ mode: 'editors', clientApproval: false }).expect(200);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('a waiting post keeps its slot; approval writes its jobs there; a post sent back gives its slot back', async () => {
    const slots = nextNines(new Date(), 4);

    // The editor's queued post waits for approval, holding the first slot; the owner's, which
    // needs no approval, is scheduled at the next one.
    const waiting = await queued(editor, 'Waits for approval');
    expect(waiting.status).toBe('pending_approval');
    expect(waiting.jobs).toEqual([]);
    expect(waiting.queueSlot?.at).toBe(slots[0]);
    expect(waiting.scheduledAt).toBe(slots[0]);
    const ownPost = await queued(owner, 'Goes out');
    expect(ownPost.status).toBe('scheduled');
    expect(ownPost.queueSlot?.at).toBe(slots[1]);

    // Approved: its jobs run at its slot.
    await t.http().post(`/v1/posts/${waiting.id}/approve`).set(bearer(owner)).expect(200);
    const approved = await get(waiting.id);
    expect(approved.status).toBe('scheduled');
    expect(approved.jobs.map((j) => j.nextAttemptAt)).toEqual([slots[0]]);
    expect(approved.queueSlot?.at).toBe(slots[0]);

    // Another waiting post takes the third slot; sent back, it is a draft without a time or a slot,
    // and the next queued post takes the slot it gave back.
    const second = await queued(editor, 'Sent back');
    expect(second.queueSlot?.at).toBe(slots[2]);
    await t.http().post(`/v1/posts/${second.id}/reject`).set(bearer(owner)).send({ comment: 'Not this week' }).expect(200);
    const draft = await get(second.id);
    expect(draft.status).toBe('draft');
    expect(draft.scheduledAt).toBeNull();
    expect(draft.queueSlot).toBeNull();
    expect((await queued(owner, 'Takes the freed slot')).queueSlot?.at).toBe(slots[2]);

    // The draft queued again by its author waits again, at the next free slot.
    const again = await t.http().patch(`/v1/posts/${second.id}`).set(bearer(editor)).send({ queue: true }).expect(200);
    expect(again.body.status).toBe('pending_approval');
    expect(again.body.queueSlot?.at).toBe(slots[3]);
  });
});
