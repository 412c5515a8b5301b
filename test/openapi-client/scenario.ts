import createClient from 'openapi-fetch';
import type { components, paths } from './generated/herald-api';

/**
 * A client written against the TypeScript types that openapi-typescript generates from the
 * running app's /docs-json (test/openapi-client.test.ts generates them, type-checks this file
 * strictly against them, then runs it). Nothing here is typed by hand: a field, a parameter or a
 * status the document gets wrong fails the type-check or the run.
 */

type Post = components['schemas']['Post'];
type ErrorBody = components['schemas']['Error'];

export interface ScenarioResult {
  accountId: string;
  secret: string;
  post: Post;
  replayedHeader: string | null;
  replayedPostId: string;
  read: Post;
  pages: string[][];
  invalid: { status: number; body: ErrorBody };
  missing: { status: number; body: ErrorBody };
  delivered: Post;
}

export async function runScenario(baseUrl: string, apiKey: string, receiverUrl: string): Promise<ScenarioResult> {
  const herald = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });

  // 1. Connect a webhook account; its signing secret is in this answer only.
  const account = await herald.POST('/v1/accounts', {
    body: { provider: 'webhook', name: 'Generated client blog', config: { url: receiverUrl } },
  });
  if (!account.data) throw new Error(`createAccount answered ${account.response.status}: ${JSON.stringify(account.error)}`);
  const accountId: string = account.data.id;
  const secret: string | undefined = account.data.secret;
  if (!secret?.startsWith('whsec_')) throw new Error('the webhook secret was not in the answer');

  // 2. Schedule a post with an Idempotency-Key, then send the same request again.
  const request = {
    params: { header: { 'Idempotency-Key': 'generated-client-launch' } },
    body: {
      text: 'Hello from a generated client',
      link: 'https://example.com/launch',
      targets: [{ accountId }],
      metadata: { campaign: 'launch' },
    },
  };
  const created = await herald.POST('/v1/posts', request);
  if (!created.data) throw new Error(`createPost answered ${created.response.status}: ${JSON.stringify(created.error)}`);
  const replay = await herald.POST('/v1/posts', request);
  if (!replay.data) throw new Error(`the replay answered ${replay.response.status}`);

  // 3. Read it back.
  const read = await herald.GET('/v1/posts/{id}', { params: { path: { id: created.data.id } } });
  if (!read.data) throw new Error(`getPost answered ${read.response.status}`);

  // 4. Page through the list, one post per page (two more posts make three pages).
  for (const text of ['second post', 'third post']) {
    const more = await herald.POST('/v1/posts', { body: { text, targets: [{ accountId }], scheduledAt: '2099-01-01T00:00:00Z' } });
    if (!more.data) throw new Error(`createPost answered ${more.response.status}`);
  }
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await herald.GET('/v1/posts', { params: { query: { limit: 1, cursor } } });
    if (!page.data) throw new Error(`listPosts answered ${page.response.status}`);
    pages.push(page.data.data.map((p) => p.id));
    cursor = page.data.nextCursor ?? undefined;
  } while (cursor !== undefined && pages.length < 10);

  // 5. Errors come in the documented shape.
  const invalid = await herald.POST('/v1/posts', { body: { text: 'no targets', targets: [] } });
  if (!invalid.error) throw new Error('a post without targets was accepted');
  const missing = await herald.GET('/v1/posts/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
  if (!missing.error) throw new Error('an unknown post was found');

  // 6. The worker delivers the first post: wait for its status to say so (30 s at most: generous
  // on a machine loaded by other test runs).
  let delivered: Post = read.data;
  for (const deadline = Date.now() + 30_000; delivered.status !== 'published' && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = await herald.GET('/v1/posts/{id}', { params: { path: { id: created.data.id } } });
    if (!now.data) throw new Error(`getPost answered ${now.response.status}`);
    delivered = now.data;
  }

  return {
    accountId,
    secret,
    post: created.data,
    replayedHeader: replay.response.headers.get('Idempotent-Replayed'),
    replayedPostId: replay.data.id,
    read: read.data,
    pages,
    invalid: { status: invalid.response.status, body: invalid.error },
    missing: { status: missing.response.status, body: missing.error },
    delivered,
  };
}
