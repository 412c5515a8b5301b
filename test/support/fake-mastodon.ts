import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback Mastodon instance that follows the documented behaviour of the calls Herald makes.
 * No Mastodon server can run on these machines; each behaviour below is from Mastodon's API
 * documentation (read 2026-12), as docs/api.md's "Mastodon" section records what Herald relies on:
 *
 * - `POST /api/v1/statuses` (JSON: `status`, `media_ids[]`, `in_reply_to_id`, `spoiler_text`,
 *   `visibility` one of public, unlisted, private, direct): 200 with the Status. The
 *   `Idempotency-Key` header: the instance keeps a key "up to 1 hour" and answers the first status
 *   again for a repeated key (`idempotencyWindowMs`, settable so a test can age the keys).
 * - The character limit is the instance's own, `/api/v2/instance` →
 *   `configuration.statuses.max_characters` (`maxCharacters`, 500 by default) with every URL
 *   counted as `characters_reserved_per_url` (23) and the content warning counted with the text;
 *   over it: 422 `{"error":"Validation failed: Text character limit of 500 exceeded"}`. The same
 *   document names `max_media_attachments` (4) and the media limits.
 * - `POST /api/v2/media` (multipart `file`, `description` = alt text): 200 with a `url` when
 *   processed, or 202 with `url: null` while processing; `GET /api/v1/media/:id` answers 206
 *   (still processing, `url: null`) until it is done, then 200 with its `url` (`processingPolls`:
 *   how many looks it takes). A status with media still processing is refused (422).
 * - Errors: 401 `{"error":"The access token is invalid"}` for a revoked or unknown token; 404
 *   `{"error":"Record not found"}` for a status replied to that was deleted; 422 for a status the
 *   instance refuses; 429 with `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`
 *   (an ISO 8601 time). Every answer carries the rate-limit headers (300 requests / 5 min).
 * - `GET /api/v1/accounts/verify_credentials`: the token's Account (`id`, `username`,
 *   `display_name`, `url`).
 * - `GET /api/v1/accounts/:id/statuses` (`limit` ≤ 40, `max_id`, `exclude_reblogs`): the
 *   account's statuses, newest first, with `content` rendered as HTML as instances do (paragraphs,
 *   links with their scheme and tail in `invisible` spans, a remote mention shown without its
 *   server).
 *
 * A test can also inject the failures the network produces (`fail`): an answer of its choosing,
 * or a request that is applied and whose answer is then lost (the connection cut before the
 * answer: "the lost answer").
 */

export interface FakeRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface FakeStatus {
  id: string;
  accountId: string;
  text: string;
  spoilerText: string;
  visibility: string;
  inReplyToId: string | null;
  mediaIds: string[];
  createdAt: Date;
  idempotencyKey: string | null;
  deleted: boolean;
}

export interface FakeMedia {
  id: string;
  accountId: string;
  bytes: Buffer;
  mimeType: string;
  description: string;
  /** Looks (GET /api/v1/media/:id) left before it is processed. */
  pollsLeft: number;
}

export type Route = 'statuses' | 'media' | 'media-get' | 'verify' | 'instance' | 'account-statuses';

/** What to do with the next request of a route, instead of (or around) the documented behaviour. */
export type Fault =
  /** Answer this instead. */
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /**
   * Apply the request as documented; then `after` runs (with the status created, for `statuses`),
   * and the answer is sent (`answer`) or the connection is cut before it (`drop`: the lost answer).
   */
  | { apply: 'answer' | 'drop'; after?: (created: FakeStatus | null) => void };

interface Token {
  accountId: string;
}

const ACCOUNT = { username: 'ada', displayName: 'Ada Lovelace' };

/**
 * More routes for the fake (its OAuth endpoints: ./fake-mastodon-oauth.ts): answers the request
 * and returns true, or returns false to leave it to the fake's own routes.
 */
export type FakeExtension = (req: FakeRequest, res: http.ServerResponse) => boolean | Promise<boolean>;

export class FakeMastodon {
  readonly accountId = '109348278469001';
  /** The instance's people by account id: @ada, and whoever a test adds (`addPerson`). */
  readonly people = new Map<string, { username: string; displayName: string }>([[this.accountId, ACCOUNT]]);
  readonly extensions: FakeExtension[] = [];
  readonly requests: FakeRequest[] = [];
  readonly statuses: FakeStatus[] = [];
  readonly media = new Map<string, FakeMedia>();
  /** The instance's limits (/api/v2/instance), settable. */
  maxCharacters = 500;
  charactersReservedPerUrl = 23;
  maxMediaAttachments = 4;
  /** How long the instance keeps an Idempotency-Key ("up to 1 hour"). */
  idempotencyWindowMs = 60 * 60_000;
  /** Looks at an uploaded image before it is processed: 0 answers 200 at once, more answers 202 first. */
  processingPolls = 0;
  private readonly tokens = new Map<string, Token>();
  private readonly faults = new Map<Route, Fault[]>();
  private server!: http.Server;
  private seq = 0;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void this.handle({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) }, res);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get host(): string {
    return new URL(this.url).host;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  /** A valid access token of one of the instance's accounts (@ada unless said). */
  issueToken(accountId = this.accountId): string {
    const token = `mstdn-${randomBytes(16).toString('hex')}`;
    this.tokens.set(token, { accountId });
    return token;
  }

  /** Another person with an account on the instance; returns its id. */
  addPerson(username: string, displayName: string): string {
    const id = (BigInt(this.accountId) + BigInt(this.people.size)).toString();
    this.people.set(id, { username, displayName });
    return id;
  }

  /** The token stops working (revoked): 401 from then on. */
  revoke(token: string): void {
    this.tokens.delete(token);
  }

  fail(route: Route, ...faults: Fault[]): void {
    this.faults.set(route, [...(this.faults.get(route) ?? []), ...faults]);
  }

  calls(route: Route): FakeRequest[] {
    return this.requests.filter((r) => routeOf(r) === route);
  }

  /** The live statuses whose text starts with `prefix`, oldest first. */
  posted(prefix: string): FakeStatus[] {
    return this.statuses.filter((s) => !s.deleted && s.text.startsWith(prefix));
  }

  /** A person deletes a status on the instance. */
  delete(id: string): void {
    const s = this.statuses.find((x) => x.id === id);
    if (s) s.deleted = true;
  }

  /** The account posts `n` statuses of its own (another app, a person), newest last. */
  seed(n: number, label = 'posted elsewhere'): void {
    for (let i = 0; i < n; i++) this.create({ accountId: this.accountId, text: `${label} ${i + 1}`, idempotencyKey: null });
  }

  private create(input: Partial<FakeStatus> & { accountId: string; text: string; idempotencyKey: string | null }): FakeStatus {
    const status: FakeStatus = {
      id: this.nextId(),
      spoilerText: '',
      visibility: 'public',
      inReplyToId: null,
      mediaIds: [],
      createdAt: new Date(),
      deleted: false,
      ...input,
    };
    this.statuses.push(status);
    return status;
  }

  /** Ids like Mastodon's: numeric strings that grow with time (compared as numbers). */
  private nextId(): string {
    this.seq += 1;
    return (BigInt(Date.now()) * 65536n + BigInt(this.seq)).toString();
  }

  private rateHeaders(): Record<string, string> {
    return {
      'x-ratelimit-limit': '300',
      'x-ratelimit-remaining': '299',
      'x-ratelimit-reset': new Date(Math.ceil(Date.now() / 300_000) * 300_000).toISOString(),
    };
  }

  private async handle(req: FakeRequest, res: http.ServerResponse): Promise<void> {
    this.requests.push(req);
    for (const extension of this.extensions) if (await extension(req, res)) return;
    const reply = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      const text = body === undefined ? '' : JSON.stringify(body);
      res.writeHead(status, { ...this.rateHeaders(), ...(text ? { 'content-type': 'application/json; charset=utf-8' } : {}), ...headers });
      res.end(text);
    };
    const route = routeOf(req);
    if (route === null) return reply(404, { error: 'Record not found' });
    const fault = this.faults.get(route)?.shift();
    if (fault && 'status' in fault) return reply(fault.status, fault.body ?? { error: 'injected' }, fault.headers);
    const applied = (created: FakeStatus | null, status: number, body: unknown) => {
      fault?.after?.(created);
      if (fault?.apply === 'drop') {
        // Applied, and the connection is cut before the answer: the client never hears of it.
        res.socket?.destroy();
        return;
      }
      reply(status, body);
    };

    if (route === 'instance') return applied(null, 200, this.instance());

    const auth = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    const token = auth ? this.tokens.get(auth[1]) : undefined;
    if (!token) return reply(401, { error: 'The access token is invalid' });

    switch (route) {
      case 'verify':
        return applied(null, 200, this.account(token.accountId));
      case 'account-statuses':
        return applied(null, 200, this.accountStatuses(req));
      case 'media':
        return this.upload(req, token, applied, reply);
      case 'media-get': {
        const m = this.media.get(req.path.split('?')[0].split('/').pop() ?? '');
        if (!m || m.accountId !== token.accountId) return reply(404, { error: 'Record not found' });
        if (m.pollsLeft > 0) {
          m.pollsLeft -= 1;
          return applied(null, 206, this.mediaEntity(m, false));
        }
        return applied(null, 200, this.mediaEntity(m, true));
      }
      case 'statuses':
        return this.postStatus(req, token, applied, reply);
    }
  }

  private instance(): unknown {
    return {
      domain: this.host,
      title: 'Fake Mastodon',
      version: '4.3.0',
      source_url: 'https://github.com/mastodon/mastodon',
      configuration: {
        urls: { streaming: this.url.replace('http', 'ws') },
        accounts: { max_featured_tags: 10 },
        statuses: {
          max_characters: this.maxCharacters,
          max_media_attachments: this.maxMediaAttachments,
          characters_reserved_per_url: this.charactersReservedPerUrl,
        },
        media_attachments: {
          supported_mime_types: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'],
          image_size_limit: 16_777_216,
          image_matrix_limit: 33_177_600,
          video_size_limit: 103_809_024,
        },
      },
    };
  }

  private account(id = this.accountId): unknown {
    const person = this.people.get(id) ?? ACCOUNT;
    return {
      id,
      username: person.username,
      acct: person.username,
      display_name: person.displayName,
      url: `${this.url}/@${person.username}`,
      statuses_count: this.statuses.filter((s) => !s.deleted && s.accountId === id).length,
    };
  }

  private async upload(
    req: FakeRequest,
    token: Token,
    applied: (created: FakeStatus | null, status: number, body: unknown) => void,
    reply: (status: number, body?: unknown) => void,
  ): Promise<void> {
    let form: FormData;
    try {
      form = await new Response(req.body, { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
    } catch {
      return reply(422, { error: 'Validation failed: File must be a multipart upload' });
    }
    const file = form.get('file');
    if (!(file instanceof Blob)) return reply(422, { error: "Validation failed: File content type is invalid, File can't be blank" });
    const description = form.get('description');
    const m: FakeMedia = {
      id: this.nextId(),
      accountId: token.accountId,
      bytes: Buffer.from(await file.arrayBuffer()),
      mimeType: file.type,
      description: typeof description === 'string' ? description : '',
      pollsLeft: this.processingPolls,
    };
    this.media.set(m.id, m);
    applied(null, m.pollsLeft > 0 ? 202 : 200, this.mediaEntity(m, m.pollsLeft === 0));
  }

  private mediaEntity(m: FakeMedia, processed: boolean): unknown {
    return {
      id: m.id,
      type: 'image',
      url: processed ? `${this.url}/system/media/${m.id}.png` : null,
      preview_url: `${this.url}/system/media/${m.id}-small.png`,
      description: m.description,
    };
  }

  private postStatus(
    req: FakeRequest,
    token: Token,
    applied: (created: FakeStatus | null, status: number, body: unknown) => void,
    reply: (status: number, body?: unknown) => void,
  ): void {
    const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
    if (key !== null) {
      // The same key within the window: the first status again, nothing created.
      const first = this.statuses.find(
        (s) => s.idempotencyKey === key && s.accountId === token.accountId && Date.now() - s.createdAt.getTime() < this.idempotencyWindowMs,
      );
      if (first) return applied(first, 200, this.entity(first));
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(req.body.toString('utf8')) as Record<string, unknown>;
    } catch {
      return reply(422, { error: "Validation failed: Text can't be blank" });
    }
    const text = typeof body.status === 'string' ? body.status : '';
    const spoilerText = typeof body.spoiler_text === 'string' ? body.spoiler_text : '';
    const mediaIds = Array.isArray(body.media_ids) ? body.media_ids.map(String) : [];
    const visibility = typeof body.visibility === 'string' ? body.visibility : 'public';
    if (text.trim() === '' && mediaIds.length === 0) return reply(422, { error: "Validation failed: Text can't be blank" });
    if (!['public', 'unlisted', 'private', 'direct'].includes(visibility)) {
      return reply(422, { error: 'Validation failed: Visibility is not included in the list' });
    }
    const length = countLikeAnInstance(text, spoilerText, this.charactersReservedPerUrl);
    if (length > this.maxCharacters) {
      return reply(422, { error: `Validation failed: Text character limit of ${this.maxCharacters} exceeded` });
    }
    if (mediaIds.length > this.maxMediaAttachments) {
      return reply(422, { error: `Validation failed: Cannot attach more than ${this.maxMediaAttachments} files` });
    }
    for (const id of mediaIds) {
      const m = this.media.get(id);
      if (!m || m.accountId !== token.accountId) return reply(422, { error: 'Validation failed: Media attachments are invalid' });
      if (m.pollsLeft > 0) return reply(422, { error: 'Cannot attach files that have not finished processing. Try again in a moment!' });
    }
    const inReplyToId = typeof body.in_reply_to_id === 'string' ? body.in_reply_to_id : null;
    if (inReplyToId !== null && !this.statuses.some((s) => s.id === inReplyToId && !s.deleted)) {
      return reply(404, { error: 'Record not found' });
    }
    const status = this.create({ accountId: token.accountId, text, spoilerText, visibility, inReplyToId, mediaIds, idempotencyKey: key });
    applied(status, 200, this.entity(status));
  }

  private accountStatuses(req: FakeRequest): unknown[] {
    const url = new URL(req.path, this.url);
    const id = url.pathname.split('/')[4];
    const limit = Math.min(40, Number(url.searchParams.get('limit') ?? '20') || 20);
    const maxId = url.searchParams.get('max_id');
    return this.statuses
      .filter((s) => s.accountId === id && !s.deleted && (maxId === null || BigInt(s.id) < BigInt(maxId)))
      .sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : -1))
      .slice(0, limit)
      .map((s) => this.entity(s));
  }

  /** The Status entity, its text rendered as an instance renders it. */
  private entity(s: FakeStatus): unknown {
    return {
      id: s.id,
      uri: `${this.url}/users/${ACCOUNT.username}/statuses/${s.id}`,
      url: `${this.url}/@${ACCOUNT.username}/${s.id}`,
      created_at: s.createdAt.toISOString(),
      in_reply_to_id: s.inReplyToId,
      in_reply_to_account_id: s.inReplyToId ? this.accountId : null,
      sensitive: s.spoilerText !== '',
      spoiler_text: s.spoilerText,
      visibility: s.visibility,
      content: renderHtml(s.text),
      media_attachments: s.mediaIds.map((id) => this.mediaEntity(this.media.get(id)!, true)),
      account: this.account(),
    };
  }
}

function routeOf(req: FakeRequest): Route | null {
  const path = req.path.split('?')[0];
  if (req.method === 'POST' && path === '/api/v1/statuses') return 'statuses';
  if (req.method === 'POST' && path === '/api/v2/media') return 'media';
  if (req.method === 'GET' && /^\/api\/v1\/media\/[^/]+$/.test(path)) return 'media-get';
  if (req.method === 'GET' && path === '/api/v1/accounts/verify_credentials') return 'verify';
  if (req.method === 'GET' && path === '/api/v2/instance') return 'instance';
  if (req.method === 'GET' && /^\/api\/v1\/accounts\/[^/]+\/statuses$/.test(path)) return 'account-statuses';
  return null;
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** The instance's count, written apart from Herald's own: URLs as the reserved length, remote mentions as local ones, the content warning included. */
function countLikeAnInstance(text: string, spoilerText: string, perUrl: number): number {
  const countable = text.replace(/https?:\/\/\S+/g, 'x'.repeat(perUrl)).replace(/@(\w+)@[\w.-]+\w/g, '@$1');
  return [...segmenter.segment(spoilerText + countable)].length;
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** Plain text as an instance renders it: paragraphs, line breaks, links shortened with invisible spans, remote mentions without their server. */
function renderHtml(text: string): string {
  const inline = (line: string) =>
    escapeHtml(line)
      .replace(/https?:\/\/[^\s<]+/g, (url) => {
        const scheme = /^https?:\/\//.exec(url)![0];
        const rest = url.slice(scheme.length);
        return `<a href="${url}" rel="nofollow noopener" target="_blank"><span class="invisible">${scheme}</span><span class="ellipsis">${rest.slice(0, 30)}</span><span class="invisible">${rest.slice(30)}</span></a>`;
      })
      .replace(/@(\w+)@([\w.-]+\w)/g, '<span class="h-card"><a href="https://$2/@$1" class="u-url mention">@<span>$1</span></a></span>');
  return text
    .split(/\n{2,}/)
    .map((para) => `<p>${para.split('\n').map(inline).join('<br />')}</p>`)
    .join('');
}

export async function startFakeMastodon(): Promise<FakeMastodon> {
  return new FakeMastodon().start();
}
