import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { trickle } from './hostile';
import { NEWEST_LINKEDIN_VERSION } from '../../src/config/linkedin-versions';

/**
 * A loopback LinkedIn that follows the documented behaviour of the calls Herald makes. Sources:
 * - Posts API: learn.microsoft.com/linkedin/marketing/community-management/shares/posts-api
 *   (POST /rest/posts, 201 with the new URN in `x-restli-id`, body fields author, commentary,
 *   visibility, distribution, lifecycleState, content.article/media/multiImage).
 * - Images API: learn.microsoft.com/linkedin/marketing/community-management/shares/images-api
 *   (POST /rest/images?action=initializeUpload { initializeUploadRequest: { owner } } →
 *   { value: { uploadUrlExpiresAt, uploadUrl, image } }; PUT the bytes to uploadUrl with the
 *   bearer token → 201).
 * - MultiImage API: learn.microsoft.com/linkedin/marketing/community-management/shares/multiimage-post-api
 *   (content.multiImage.images: an array of Media `{ id, altText? }`, "a minimum of 2 images and
 *   maximum of 20 images", image URNs only, every image owned by the post's author: here, uploaded
 *   with the author as its owner). A post has
 *   one content (Posts API: article, media, multiImage, …). The pages give these rules, not the
 *   answer to a breach: the fake answers 422 with the field's path, as LinkedIn's Rest.li
 *   validation answers a missing field (FIELD_MISSING above), and 400 for an image that was
 *   never uploaded.
 * - Versioning: learn.microsoft.com/linkedin/marketing/versioning (every /rest/ call needs
 *   `LinkedIn-Version: YYYYMM`; a missing one is 400 VERSION_MISSING; a retired one is 426
 *   NONEXISTENT_VERSION "Requested version … is not active") and the Rest.li 2.0 protocol header
 *   `X-Restli-Protocol-Version: 2.0.0`.
 * - Errors: Microsoft Learn, LinkedIn API guide, "Error handling"
 *   ({ message, serviceErrorCode, status }; 401 for an invalid, expired or revoked token; 429
 *   over the daily quota — no Retry-After is documented, so none is sent).
 * - Duplicates: LinkedIn's 422 answer for repeated content ("Content is a duplicate of
 *   urn:li:share:…", inputErrors code DUPLICATE_POST).
 * - OpenID userinfo: learn.microsoft.com/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2
 *   (GET /v2/userinfo → { sub, name, … }).
 * - Refresh: Microsoft Learn, LinkedIn authentication, "Programmatic refresh tokens"
 *   (POST /oauth/v2/accessToken, form grant_type=refresh_token, refresh_token, client_id,
 *   client_secret → { access_token, expires_in, refresh_token, refresh_token_expires_in };
 *   a bad refresh token is 400 invalid_request).
 */

export interface FakeRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface FakePost {
  urn: string;
  body: Record<string, unknown>;
  token: string;
}

/** A failure to play instead of the documented behaviour, for the next matching call. */
export type Fault =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /** Create the post, then cut the connection before answering (the answer is lost). */
  | 'create-then-reset'
  /**
   * A server that is slow, not down: for posts, create the post, then send the whole answer
   * (status line included) one byte every `trickleMs`; for initializeUpload, send the status and
   * headers at once and the JSON body one byte every `trickleMs`.
   */
  | { trickleMs: number };

export type Route = 'posts' | 'initializeUpload' | 'upload' | 'userinfo' | 'token';

export class FakeLinkedIn {
  readonly clientId = 'herald-test-client';
  readonly clientSecret = `secret-${randomBytes(6).toString('hex')}`;
  readonly memberId = 'aB3dE5fG7h';
  readonly authorUrn = `urn:li:person:${this.memberId}`;
  /** Versions the fake serves; anything else is 426 (a retired version). */
  activeVersions = new Set([NEWEST_LINKEDIN_VERSION, '202603', '202510']);
  readonly requests: FakeRequest[] = [];
  readonly posts: FakePost[] = [];
  readonly images = new Map<string, { owner: string; bytes: Buffer | null }>();
  private readonly tokens = new Set<string>();
  private readonly refreshTokens = new Set<string>();
  private readonly faults = new Map<Route, Fault[]>();
  private server!: http.Server;
  private seq = 7_000_000_000_000_000_000n;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () =>
        this.handle({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) }, res),
      );
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  /** A valid access token (and a refresh token when asked). */
  issueToken(): string {
    const t = `AQV${randomBytes(12).toString('hex')}`;
    this.tokens.add(t);
    return t;
  }
  issueRefreshToken(): string {
    const t = `AQX${randomBytes(12).toString('hex')}`;
    this.refreshTokens.add(t);
    return t;
  }
  /** The token stops working (expired or revoked): 401 from then on. */
  expire(token: string): void {
    this.tokens.delete(token);
  }
  fail(route: Route, ...faults: Fault[]): void {
    this.faults.set(route, [...(this.faults.get(route) ?? []), ...faults]);
  }
  calls(route: Route): FakeRequest[] {
    return this.requests.filter((r) => routeOf(r) === route);
  }

  private nextUrn(kind: string): string {
    this.seq += 1n;
    return `urn:li:${kind}:${this.seq}`;
  }

  private handle(req: FakeRequest, res: http.ServerResponse): void {
    this.requests.push(req);
    const route = routeOf(req);
    const reply = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      const text = body === undefined ? '' : JSON.stringify(body);
      res.writeHead(status, { ...(text ? { 'content-type': 'application/json' } : {}), ...headers });
      res.end(text);
    };
    const error = (status: number, message: string, extra: Record<string, unknown> = {}) =>
      reply(status, { message, serviceErrorCode: extra.serviceErrorCode ?? 0, status, ...extra });
    if (route === null) return error(404, `No route for ${req.method} ${req.path}`);

    if (route === 'token') return this.token(req, reply);

    const auth = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    if (!auth || !this.tokens.has(auth[1]))
      return error(401, 'Invalid access token', { serviceErrorCode: 65600, code: 'INVALID_ACCESS_TOKEN' });
    const token = auth[1];

    if (route === 'posts' || route === 'initializeUpload') {
      const version = req.headers['linkedin-version'];
      if (typeof version !== 'string') {
        return error(400, 'A version must be present. Please specify a version by adding the LinkedIn-Version header.', {
          code: 'VERSION_MISSING',
        });
      }
      if (!this.activeVersions.has(version))
        return error(426, `Requested version ${version} is not active`, { code: 'NONEXISTENT_VERSION' });
      if (req.headers['x-restli-protocol-version'] !== '2.0.0') {
        return error(400, 'X-Restli-Protocol-Version 2.0.0 is required for this resource', { code: 'PROTOCOL_VERSION_MISSING' });
      }
    }

    const fault = this.faults.get(route)?.shift();
    if (fault !== undefined && fault !== 'create-then-reset' && 'status' in fault) {
      return reply(fault.status, fault.body ?? { message: 'injected', status: fault.status }, fault.headers);
    }

    switch (route) {
      case 'userinfo':
        return reply(200, {
          sub: this.memberId,
          name: 'Ada Lovelace',
          given_name: 'Ada',
          family_name: 'Lovelace',
          locale: { country: 'GB', language: 'en' },
        });
      case 'initializeUpload': {
        const owner = (parseJson(req.body) as { initializeUploadRequest?: { owner?: unknown } }).initializeUploadRequest?.owner;
        if (owner !== this.authorUrn) return error(403, `Not enough permissions to upload as ${String(owner)}`);
        const image = this.nextUrn('image').replace(/:(\d+)$/, ':C4D$1');
        const uploadToken = randomBytes(8).toString('hex');
        this.images.set(image, { owner: String(owner), bytes: null });
        uploadPaths.set(uploadToken, image);
        const answer = {
          value: { uploadUrlExpiresAt: Date.now() + 86_400_000, uploadUrl: `${this.url}/dms-uploads/${uploadToken}`, image },
        };
        if (fault !== undefined && fault !== 'create-then-reset' && 'trickleMs' in fault)
          return trickleBody(res, 200, JSON.stringify(answer), fault.trickleMs);
        return reply(200, answer);
      }
      case 'upload': {
        const image = uploadPaths.get(req.path.split('/').pop() ?? '');
        if (!image) return error(404, 'Upload URL not found');
        this.images.get(image)!.bytes = req.body;
        return reply(201);
      }
      case 'posts':
        return this.createPost(req, token, fault ?? null, res, reply, error);
    }
  }

  private createPost(
    req: FakeRequest,
    token: string,
    fault: Fault | null,
    res: http.ServerResponse,
    reply: (status: number, body?: unknown, headers?: Record<string, string>) => void,
    error: (status: number, message: string, extra?: Record<string, unknown>) => void,
  ): void {
    const body = parseJson(req.body) as Record<string, unknown>;
    for (const field of ['author', 'commentary', 'visibility', 'distribution', 'lifecycleState']) {
      if (body[field] === undefined)
        return error(422, `/${field} :: field is required but not found and has no default value`, { code: 'FIELD_MISSING' });
    }
    if (body.author !== this.authorUrn) return error(403, `Not enough permissions to post as ${String(body.author)}`);
    const images = contentImages(body.content);
    if ('problem' in images) return error(422, images.problem, { code: 'INVALID_CONTENT' });
    for (const { id } of images.list) {
      const stored = this.images.get(id);
      // Owned by the author: initializeUpload already refuses any other owner (403).
      if (stored?.bytes == null) return error(400, `Image ${id} has not been uploaded`, { code: 'INVALID_CONTENT' });
    }
    const duplicate = this.posts.find((p) => p.body.author === body.author && p.body.commentary === body.commentary);
    if (duplicate) {
      return reply(422, {
        errorDetailType: 'com.linkedin.common.error.BadRequest',
        message: `Unprocessable Entity: Content is a duplicate of ${duplicate.urn}`,
        errorDetails: { inputErrors: [{ description: 'Duplicate post is detected', input: {}, code: 'DUPLICATE_POST' }] },
        status: 422,
      });
    }
    const urn = this.nextUrn('share');
    this.posts.push({ urn, body, token });
    if (fault === 'create-then-reset') {
      res.socket?.destroy();
      return;
    }
    if (fault !== null && 'trickleMs' in fault && res.socket) {
      // Written straight to the socket: Node's ServerResponse would send the head in one piece.
      trickle(`HTTP/1.1 201 Created\r\nx-restli-id: ${urn}\r\ncontent-length: 0\r\n\r\n`, fault.trickleMs)(res.socket, '');
      return;
    }
    reply(201, undefined, { 'x-restli-id': urn, 'x-linkedin-id': urn });
  }

  private token(req: FakeRequest, reply: (status: number, body?: unknown) => void): void {
    const fault = this.faults.get('token')?.shift();
    if (fault !== undefined && fault !== 'create-then-reset' && 'status' in fault) return reply(fault.status, fault.body);
    const form = new URLSearchParams(req.body.toString('utf8'));
    if (
      form.get('grant_type') !== 'refresh_token' ||
      form.get('client_id') !== this.clientId ||
      form.get('client_secret') !== this.clientSecret
    ) {
      return reply(401, { error: 'invalid_client', error_description: 'Client authentication failed' });
    }
    const refresh = form.get('refresh_token') ?? '';
    if (!this.refreshTokens.has(refresh)) {
      return reply(400, {
        error: 'invalid_request',
        error_description: 'The provided authorization grant or refresh token is invalid, expired or revoked',
      });
    }
    reply(200, { access_token: this.issueToken(), expires_in: 5_184_000, refresh_token: refresh, refresh_token_expires_in: 31_000_000 });
  }
}

const uploadPaths = new Map<string, string>();

/** The MultiImage API's bounds ("a minimum of 2 images and maximum of 20 images"). */
export const MULTI_IMAGE_MIN = 2;
export const MULTI_IMAGE_MAX = 20;

/**
 * The images a post's `content` refers to, in order, or what is wrong with it: one content kind
 * at most; `media` one `{ id, altText? }`; `multiImage.images` 2 to 20 of them, image URNs only.
 */
function contentImages(content: unknown): { list: { id: string; altText?: string }[] } | { problem: string } {
  if (content === undefined) return { list: [] };
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return { problem: '/content :: must be a record' };
  const kinds = Object.keys(content);
  if (kinds.length !== 1) return { problem: `/content :: exactly one content type is allowed, got ${kinds.join(', ') || 'none'}` };
  const c = content as { article?: unknown; media?: unknown; multiImage?: { images?: unknown } };
  if (c.article !== undefined) return { list: [] };
  const checked = (item: unknown, path: string, imagesOnly: boolean): { id: string; altText?: string } | string => {
    const m = item as { id?: unknown; altText?: unknown } | null;
    if (typeof m !== 'object' || m === null || typeof m.id !== 'string') return `${path}/id :: field is required but not found`;
    if (imagesOnly && !m.id.startsWith('urn:li:image:')) return `${path}/id :: ${m.id} is not an image URN`;
    if (m.altText !== undefined && typeof m.altText !== 'string') return `${path}/altText :: must be a string`;
    return { id: m.id, ...(m.altText !== undefined ? { altText: m.altText } : {}) };
  };
  if (c.media !== undefined) {
    const one = checked(c.media, '/content/media', false);
    return typeof one === 'string' ? { problem: one } : { list: [one] };
  }
  if (c.multiImage !== undefined) {
    const images = c.multiImage.images;
    if (!Array.isArray(images)) return { problem: '/content/multiImage/images :: field is required but not found' };
    if (images.length < MULTI_IMAGE_MIN || images.length > MULTI_IMAGE_MAX) {
      return {
        problem: `/content/multiImage/images :: ${images.length} images, a multi-image post takes ${MULTI_IMAGE_MIN} to ${MULTI_IMAGE_MAX}`,
      };
    }
    const list: { id: string; altText?: string }[] = [];
    for (const [i, item] of images.entries()) {
      const one = checked(item, `/content/multiImage/images/${i}`, true);
      if (typeof one === 'string') return { problem: one };
      list.push(one);
    }
    return { list };
  }
  return { problem: `/content :: ${kinds[0]} is not a content type this fake knows` };
}

/** The status and headers at once, then the body one byte at a time until done or the client leaves. */
function trickleBody(res: http.ServerResponse, status: number, body: string, intervalMs: number): void {
  const bytes = Buffer.from(body, 'utf8');
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length });
  res.flushHeaders();
  let i = 0;
  const timer = setInterval(() => {
    if (res.destroyed || i >= bytes.length) {
      clearInterval(timer);
      if (!res.destroyed) res.end();
      return;
    }
    res.write(bytes.subarray(i, i + 1));
    i += 1;
  }, intervalMs);
  timer.unref();
  res.on('close', () => clearInterval(timer));
}

function routeOf(req: FakeRequest): Route | null {
  const path = req.path.split('?')[0];
  if (req.method === 'POST' && path === '/rest/posts') return 'posts';
  if (req.method === 'POST' && path === '/rest/images' && req.path.includes('action=initializeUpload')) return 'initializeUpload';
  if (req.method === 'PUT' && path?.startsWith('/dms-uploads/')) return 'upload';
  if (req.method === 'GET' && path === '/v2/userinfo') return 'userinfo';
  if (req.method === 'POST' && path === '/oauth/v2/accessToken') return 'token';
  return null;
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return {};
  }
}

export async function startFakeLinkedIn(): Promise<FakeLinkedIn> {
  return new FakeLinkedIn().start();
}
