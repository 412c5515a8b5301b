import { Client } from 'pg';
import { bearer, bootTestApp, TestApp } from './support/app';
import { withClient } from './support/database';
import { createPost, createWebhookAccount } from './support/engine';
import { makeImage, uploadImage } from './support/media';

/**
 * Every list with a cursor walks each row exactly once, even when rows were created within the
 * same millisecond. PostgreSQL keeps timestamps to the microsecond, a JavaScript Date to the
 * millisecond: a cursor carrying the last row's time as a Date would compare against a truncated
 * time and skip (or repeat) the rows that share its millisecond. Bulk imports and concurrent
 * requests do create such rows; here their times are set to one millisecond apart by µs.
 */

const N = 7;
const LIMIT = 2;
/** One millisecond, seven microseconds apart. */
const SAME_MS = (i: number) => `2026-03-01 12:00:00.123${String(i).padStart(3, '0')}+00`;

describe('list cursors over rows created within one millisecond', () => {
  let t: TestApp;
  let key: string;
  let workspaceId: string;

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    const res = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name: 'Cursors' }).expect(201);
    key = res.body.apiKey.key;
    workspaceId = res.body.workspace.id;
  });
  afterAll(async () => {
    await t.close();
  });

  /** Gives the workspace's rows of `table` created_at values within one millisecond (µs apart, in id order). */
  async function squeeze(table: string, ids: string[]): Promise<void> {
    await withClient(t.databaseUrl, async (db: Client) => {
      for (const [i, id] of ids.entries()) {
        await db.query(`UPDATE ${table} SET created_at = $2::timestamptz WHERE id = $1`, [id, SAME_MS(i)]);
      }
    });
  }

  /** Walks `path` page by page (LIMIT per page) and returns the ids in the order served. */
  async function walk(path: string): Promise<string[]> {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 50; pages++) {
      const sep = path.includes('?') ? '&' : '?';
      const res: { body: { data: { id: string }[]; nextCursor: string | null } } = await t
        .http()
        .get(`${path}${sep}limit=${LIMIT}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
        .set(bearer(key))
        .expect(200);
      seen.push(...res.body.data.map((row) => row.id));
      cursor = res.body.nextCursor;
      if (!cursor) return seen;
    }
    throw new Error(`${path}: more than 50 pages`);
  }

  /** Newest first: the row given the latest microsecond comes first. */
  const newestFirst = (ids: string[]) => [...ids].reverse();

  it('GET /v1/accounts', async () => {
    const ids: string[] = [];
    for (let i = 0; i < N; i++) ids.push((await createWebhookAccount(t, key, `http://127.0.0.1:9/hook-${i}`)).id);
    await squeeze('accounts', ids);
    expect(await walk('/v1/accounts')).toEqual(newestFirst(ids));
  });

  it('GET /v1/posts', async () => {
    const account = await createWebhookAccount(t, key, 'http://127.0.0.1:9/posts');
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      ids.push(
        (await createPost(t, key, { text: `post ${i}`, targets: [{ accountId: account.id }], scheduledAt: '2030-01-01T09:00:00Z' })).id,
      );
    }
    await squeeze('posts', ids);
    expect(await walk('/v1/posts')).toEqual(newestFirst(ids));
  });

  it('GET /v1/media', async () => {
    const ids: string[] = [];
    for (let i = 0; i < N; i++) ids.push(await uploadImage(t, key, await makeImage('png', 20 + i, 20)));
    await squeeze('media', ids);
    expect(await walk('/v1/media')).toEqual(newestFirst(ids));
  });

  it('GET /v1/api-keys', async () => {
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      ids.push(
        (
          await t
            .http()
            .post('/v1/api-keys')
            .set(bearer(key))
            .send({ name: `key ${i}` })
            .expect(201)
        ).body.id,
      );
    }
    // The workspace's first key stays older than these.
    await withClient(t.databaseUrl, (db: Client) =>
      db.query(`UPDATE api_keys SET created_at = '2026-01-01Z' WHERE workspace_id = $1 AND NOT (id = ANY($2::uuid[]))`, [workspaceId, ids]),
    );
    await squeeze('api_keys', ids);
    const walked = await walk('/v1/api-keys');
    expect(walked.slice(0, N)).toEqual(newestFirst(ids));
    expect(walked).toHaveLength(N + 1);
  });

  it('GET /v1/dlq', async () => {
    // Dead jobs: posts whose jobs are made dead in the database, dying within one millisecond.
    const account = await createWebhookAccount(t, key, 'http://127.0.0.1:9/dlq');
    const jobIds: string[] = [];
    for (let i = 0; i < N; i++) {
      const post = await createPost(t, key, {
        text: `dead ${i}`,
        targets: [{ accountId: account.id }],
        scheduledAt: '2030-01-01T09:00:00Z',
      });
      jobIds.push(post.jobs[0].id);
    }
    await withClient(t.databaseUrl, async (db: Client) => {
      for (const [i, id] of jobIds.entries()) {
        await db.query(
          `UPDATE job_state SET status = 'dead', dead_reason = 'max_attempts', finished_at = $2::timestamptz WHERE job_id = $1`,
          [id, SAME_MS(i)],
        );
      }
    });
    expect(await walk(`/v1/dlq?accountId=${account.id}`)).toEqual(newestFirst(jobIds));
  });
});
