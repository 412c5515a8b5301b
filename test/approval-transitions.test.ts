import {
  APPROVAL_OPERATIONS,
  APPROVAL_STATES,
  APPROVAL_TRANSITIONS,
  ApprovalState,
  approvalTransition,
} from '../src/approval-policy/approval-transitions';
import { approvalStateOf } from '../src/posts/post-approvals.service';
import { bootTestApp, TestApp } from './support/app';
import { bearer } from './support/config';
import { withClient } from './support/database';
import { createWebhookAccount } from './support/engine';

/**
 * The approval table (src/approval-policy/approval-transitions.ts) as behaviour: for every row
 * (operation × state, and each fact that splits a row), a post is put in that state through the
 * API, the operation is run through the API, and the answer and the rows are checked against the
 * table: the state it names (read back from posts, jobs and approval_steps), or a 409 that
 * changed nothing. The workspace's mode is `editors`: an editor key's posts need approval
 * (approvalRequired), an owner key's do not. The worker is off: no job moves by itself.
 */
const FUTURE = '2030-01-01T09:00:00Z';

interface Snapshot {
  post: Record<string, unknown> | null;
  jobs: Record<string, unknown>[];
  steps: number;
}

describe('the approval table on PostgreSQL', () => {
  let t: TestApp;
  let owner: string;
  let editor: string;
  let account: string;

  const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> =>
    withClient(t.databaseUrl, async (db) => (await db.query(text, params)).rows as T[]);

  const snapshot = async (id: string): Promise<Snapshot> => ({
    post: (await q(`SELECT text, scheduled_at, publish_by, draft_targets, approval, updated_at FROM posts WHERE id = $1`, [id]))[0] ?? null,
    jobs: await q(`SELECT id, status, attempt_count FROM jobs WHERE post_id = $1 ORDER BY id`, [id]),
    steps: (await q<{ n: number }>(`SELECT count(*)::int AS n FROM approval_steps WHERE post_id = $1`, [id]))[0].n,
  });

  /** The post's state in the table's terms, from its rows. */
  const stateOf = async (id: string): Promise<ApprovalState> => {
    const [post] = await q<{ draftTargets: unknown; approval: 'pending' | 'expired' | null }>(
      `SELECT draft_targets AS "draftTargets", approval FROM posts WHERE id = $1`,
      [id],
    );
    if (!post) return 'deleted';
    const jobs = await q<{ status: never; attemptCount: number }>(
      `SELECT status, attempt_count AS "attemptCount" FROM jobs WHERE post_id = $1`,
      [id],
    );
    return approvalStateOf(post as never, jobs);
  };

  const post = async (key: string, body: Record<string, unknown>): Promise<string> => {
    const res = await t
      .http()
      .post('/v1/posts')
      .set(bearer(key))
      .send({ text: 'A post', targets: [{ accountId: account }], ...body });
    if (res.status !== 201) throw new Error(`post: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  };

  /** A post in `state`, made the way a user gets there (SQL only for time passing and an attempt made). */
  const inState = async (state: Exclude<ApprovalState, 'deleted'>): Promise<string> => {
    switch (state) {
      case 'draft':
        return post(editor, { status: 'draft' });
      case 'pending_approval':
        return post(editor, { scheduledAt: FUTURE });
      case 'scheduled':
        return post(owner, { scheduledAt: FUTURE });
      case 'started': {
        const id = await post(owner, { scheduledAt: FUTURE });
        // A worker holds its job, the attempt under way: delivery has started.
        await q(
          `UPDATE job_state SET status = 'in_progress', attempt_count = 1, lease_owner = 'test', lease_expires_at = now() + interval '1 hour'
           WHERE job_id IN (SELECT id FROM job_payloads WHERE post_id = $1)`,
          [id],
        );
        return id;
      }
      case 'cancelled': {
        const id = await post(owner, { scheduledAt: FUTURE });
        await t.http().delete(`/v1/posts/${id}`).set(bearer(owner)).expect(200);
        return id;
      }
      case 'expired': {
        const id = await post(editor, { scheduledAt: FUTURE });
        await q(`UPDATE posts SET scheduled_at = NULL, publish_by = now() - interval '1 minute' WHERE id = $1`, [id]);
        await t.http().post(`/v1/posts/${id}/approve`).set(bearer(owner)).expect(200);
        return id;
      }
    }
  };

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    owner = t.adminKey;
    const res = await t.http().post('/v1/api-keys').set(bearer(owner)).send({ name: 'editor', role: 'editor' });
    editor = res.body.key as string;
    account = (await createWebhookAccount(t, owner, 'http://127.0.0.1:9/hook')).id;
    await t.http().put('/v1/settings/approvals').set(bearer(owner)).send({ mode: 'editors', clientApproval: false }).expect(200);
  });
  afterAll(() => t.close());

  it('has exactly one row for every operation from every state and fact', () => {
    for (const from of APPROVAL_STATES) {
      for (const op of APPROVAL_OPERATIONS) {
        for (const approvalRequired of [true, false]) {
          for (const deadlinePassed of [true, false]) {
            expect(() => approvalTransition(from, op, { approvalRequired, deadlinePassed })).not.toThrow();
          }
        }
      }
    }
  });

  const cases = APPROVAL_TRANSITIONS.map((row) => ({
    name: `${row.op} from ${row.from}${row.when ? ` when ${row.when.fact} is ${row.when.is}` : ''}: ${row.refused !== undefined ? 'refused' : `→ ${row.to}`}`,
    row,
  }));

  it.each(cases)('$name', async ({ row }) => {
    const id = await inState(row.from);
    expect(await stateOf(id)).toBe(row.from);
    const required = row.when?.fact === 'approvalRequired' ? row.when.is : true;
    // The author's operations by the key whose posts need (or do not need) approval; decisions and cancel by the owner.
    const actor = ['submit', 'schedule', 'edit'].includes(row.op) ? (required ? editor : owner) : owner;
    if (row.when?.fact === 'deadlinePassed' && row.when.is) {
      await q(`UPDATE posts SET scheduled_at = NULL, publish_by = now() - interval '1 minute' WHERE id = $1`, [id]);
    }
    const before = await snapshot(id);
    const http = t.http();
    const res = await (() => {
      switch (row.op) {
        case 'submit':
          return http.post(`/v1/posts/${id}/submit`).set(bearer(actor));
        case 'schedule':
          return http.patch(`/v1/posts/${id}`).set(bearer(actor)).send({ status: 'scheduled', scheduledAt: FUTURE });
        case 'approve':
          return http.post(`/v1/posts/${id}/approve`).set(bearer(actor));
        case 'reject':
          return http.post(`/v1/posts/${id}/reject`).set(bearer(actor)).send({ comment: 'Not this week.' });
        case 'edit':
          return http.patch(`/v1/posts/${id}`).set(bearer(actor)).send({ text: 'An edited post' });
        case 'cancel':
          return http.delete(`/v1/posts/${id}`).set(bearer(actor));
      }
    })();
    if (row.refused !== undefined) {
      expect(res.status).toBe(409);
      // The table's reason (a started post's edit also says how many of its jobs started).
      expect(res.body.message).toContain(row.refused.split(' (')[0].slice(0, 33));
      expect(await snapshot(id)).toEqual(before);
      return;
    }
    expect({ status: res.status, body: res.status === 200 ? null : res.body }).toEqual({ status: 200, body: null });
    expect(await stateOf(id)).toBe(row.to);
    const after = await snapshot(id);
    const steps = await q<{ step: string }>(
      `SELECT step FROM approval_steps WHERE post_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`,
      [id],
    );
    switch (row.to) {
      case 'pending_approval':
        // No jobs while it waits; a new wait is a step (an edit of a waiting post is not).
        expect(after.jobs).toEqual([]);
        if (row.from !== 'pending_approval') expect(steps[0]?.step).toBe(row.from === 'scheduled' ? 'resubmitted' : 'submitted');
        else expect(after.steps).toBe(before.steps);
        break;
      case 'scheduled':
        expect(after.jobs.map((j) => j.status)).toEqual(['scheduled']);
        if (row.op === 'approve') expect(steps[0].step).toBe('approved');
        break;
      case 'expired':
        expect(after.jobs).toEqual([]);
        expect(steps[0].step).toBe('expired');
        break;
      case 'draft':
        expect(after.jobs).toEqual([]);
        if (row.op === 'reject') {
          expect(steps[0].step).toBe('rejected');
          expect(after.post).toMatchObject({ scheduled_at: null, publish_by: null, approval: null });
        }
        break;
      case 'deleted':
        expect(after.post).toBeNull();
        expect(after.steps).toBe(0);
        break;
      case 'cancelled':
        expect(after.jobs.map((j) => j.status)).toEqual(['cancelled']);
        break;
      case 'started':
        expect(after.jobs.map((j) => j.status)).toEqual(['in_progress']);
        break;
    }
  });
});
