import { Client } from 'pg';
import { AccountsService } from '../src/accounts/accounts.service';
import { PageQuery } from '../src/common/pagination';
import { ListDlqQuery } from '../src/dead-letter/dead-letter.dto';
import { DeadLetterModule } from '../src/dead-letter/dead-letter.module';
import { DeadLetterService } from '../src/dead-letter/dead-letter.service';
import { MediaService } from '../src/media/media.service';
import { ListPostsQuery } from '../src/posts/posts.dto';
import { PostsModule } from '../src/posts/posts.module';
import { PostsService } from '../src/posts/posts.service';
import { ApiKeysService } from '../src/workspaces/api-keys.service';
import { withClient } from './support/database';
import { makeImage } from './support/media';
import { MediumWorkspace, useMedium } from './support/medium';
import { createPost, webhookAccount } from './support/medium-factories';

/**
 * Every list with a cursor walks each row exactly once, even when rows were created within the
 * same millisecond. PostgreSQL keeps timestamps to the microsecond, a JavaScript Date to the
 * millisecond: a cursor carrying the last row's time as a Date would compare against a truncated
 * time and skip (or repeat) the rows that share its millisecond. Bulk imports and concurrent
 * requests do create such rows; here their times are set to one millisecond apart by µs.
 *
 * The cursors are made and read by the services (common/pagination.ts and the repositories'
 * keyset queries); each test walks the list its title's route serves, through the service call
 * that route makes, with the page parameters through the app's validation pipe as a query string
 * (a medium test, ./support/medium.ts). The routes' page parameters and answers are the API
 * tests' (accounts-api, posts-api, dlq-api: a cursor over HTTP, and a bad one refused).
 */

const N = 7;
const LIMIT = 2;
/** One millisecond, seven microseconds apart. */
const SAME_MS = (i: number) => `2026-03-01 12:00:00.123${String(i).padStart(3, '0')}+00`;

describe('list cursors over rows created within one millisecond', () => {
  const t = useMedium({ modules: [PostsModule, DeadLetterModule], config: { allowPrivateUrls: true } });
  let ws: MediumWorkspace;
  let workspaceId: string;

  beforeAll(async () => {
    ws = await t.workspace('Cursors');
    workspaceId = ws.id;
  });

  /** Gives the workspace's rows of `table` created_at values within one millisecond (µs apart, in id order). */
  async function squeeze(table: string, ids: string[]): Promise<void> {
    await withClient(t.databaseUrl, async (db: Client) => {
      for (const [i, id] of ids.entries()) {
        await db.query(`UPDATE ${table} SET created_at = $2::timestamptz WHERE id = $1`, [id, SAME_MS(i)]);
      }
    });
  }

  type Query = Record<string, string>;
  type List = (query: Query) => Promise<{ data: { id: string }[]; nextCursor: string | null }>;

  /** The service calls of the routes (their controllers'), the query through the validation pipe. */
  const lists: Record<'accounts' | 'posts' | 'media' | 'apiKeys' | 'dlq', List> = {
    accounts: async (q) => {
      const query = await t.input(PageQuery, q, 'query');
      return t.get(AccountsService).list(workspaceId, query.limit, query.cursor);
    },
    posts: async (q) => t.get(PostsService).list(workspaceId, await t.input(ListPostsQuery, q, 'query')),
    media: async (q) => {
      const query = await t.input(PageQuery, q, 'query');
      return t.get(MediaService).list(workspaceId, query.limit, query.cursor);
    },
    apiKeys: async (q) => {
      const query = await t.input(PageQuery, q, 'query');
      return t.get(ApiKeysService).list(workspaceId, query.limit, query.cursor);
    },
    dlq: async (q) => t.get(DeadLetterService).list(workspaceId, await t.input(ListDlqQuery, q, 'query')),
  };

  /** Walks a list page by page (LIMIT per page) and returns the ids in the order served. */
  async function walk(list: List, filter: Query = {}): Promise<string[]> {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 50; pages++) {
      const page = await list({ ...filter, limit: String(LIMIT), ...(cursor ? { cursor } : {}) });
      seen.push(...page.data.map((row) => row.id));
      cursor = page.nextCursor;
      if (!cursor) return seen;
    }
    throw new Error(`more than 50 pages`);
  }

  /** Newest first: the row given the latest microsecond comes first. */
  const newestFirst = (ids: string[]) => [...ids].reverse();

  it('GET /v1/accounts', async () => {
    const ids: string[] = [];
    for (let i = 0; i < N; i++) ids.push((await webhookAccount(t, ws.auth, `http://127.0.0.1:9/hook-${i}`)).id);
    await squeeze('accounts', ids);
    expect(await walk(lists.accounts)).toEqual(newestFirst(ids));
  });

  it('GET /v1/posts', async () => {
    const account = await webhookAccount(t, ws.auth, 'http://127.0.0.1:9/posts');
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      ids.push(
        (await createPost(t, ws.auth, { text: `post ${i}`, targets: [{ accountId: account.id }], scheduledAt: '2030-01-01T09:00:00Z' })).id,
      );
    }
    await squeeze('posts', ids);
    expect(await walk(lists.posts)).toEqual(newestFirst(ids));
  });

  it('GET /v1/media', async () => {
    const ids: string[] = [];
    for (let i = 0; i < N; i++)
      ids.push((await t.get(MediaService).upload(ws.auth, await makeImage('png', 20 + i, 20), 'a test image')).id);
    await squeeze('media', ids);
    expect(await walk(lists.media)).toEqual(newestFirst(ids));
  });

  it('GET /v1/api-keys', async () => {
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      ids.push((await t.get(ApiKeysService).createKey(ws.auth, `key ${i}`)).id);
    }
    // The workspace's first key stays older than these.
    await withClient(t.databaseUrl, (db: Client) =>
      db.query(`UPDATE api_keys SET created_at = '2026-01-01Z' WHERE workspace_id = $1 AND NOT (id = ANY($2::uuid[]))`, [workspaceId, ids]),
    );
    await squeeze('api_keys', ids);
    const walked = await walk(lists.apiKeys);
    expect(walked.slice(0, N)).toEqual(newestFirst(ids));
    expect(walked).toHaveLength(N + 1);
  });

  it('GET /v1/dlq', async () => {
    // Dead jobs: posts whose jobs are made dead in the database, dying within one millisecond.
    const account = await webhookAccount(t, ws.auth, 'http://127.0.0.1:9/dlq');
    const jobIds: string[] = [];
    for (let i = 0; i < N; i++) {
      const post = await createPost(t, ws.auth, {
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
    expect(await walk(lists.dlq, { accountId: account.id })).toEqual(newestFirst(jobIds));
  });
});
