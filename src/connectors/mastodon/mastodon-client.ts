import { HttpResult, send } from '../../common/net/http-client';

export interface MastodonClientOptions {
  allowPrivate: boolean;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
}

/** Answers are JSON: a status, an account, a page of 40 statuses, the instance. Anything longer is cut off. */
export const MAX_MASTODON_ANSWER_BYTES = 1024 * 1024;

export const USER_AGENT = 'Herald/1.0';

/** One call to an instance, with the account's token. */
export interface MastodonRequest {
  method: 'GET' | 'POST';
  /** The instance's origin (`https://mastodon.example`). */
  instanceUrl: string;
  /** From the root, with its query: `/api/v1/statuses`. */
  path: string;
  token: string | null;
  /** A JSON body, or a multipart one with its content type. */
  json?: unknown;
  multipart?: { body: Buffer; contentType: string };
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * Calls to a Mastodon instance through Herald's one outbound layer (common/net/http-client.ts),
 * as a webhook is sent: an instance's address is chosen by a workspace, so every call goes
 * through the SSRF guard at connect time (loopback and private addresses refused unless
 * HERALD_ALLOW_PRIVATE_URLS), with a connect timeout, a total deadline, the attempt's signal, a
 * cap on the answer and no redirects. A 2xx answer whose body did not arrive whole is a network
 * failure: the connector reads every body it asks for (a status id, a media id).
 */
export class MastodonClient {
  constructor(private readonly options: MastodonClientOptions) {}

  async send(req: MastodonRequest): Promise<HttpResult> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT, ...req.headers };
    if (req.token !== null) headers.authorization = `Bearer ${req.token}`;
    let body: string | Buffer | null = null;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers['content-type'] = 'application/json';
    } else if (req.multipart) {
      body = req.multipart.body;
      headers['content-type'] = req.multipart.contentType;
    }
    const result = await send(
      { method: req.method, url: `${req.instanceUrl}${req.path}`, headers, body },
      {
        connectTimeoutMs: this.options.connectTimeoutMs,
        totalTimeoutMs: this.options.totalTimeoutMs,
        allowPrivate: this.options.allowPrivate,
        maxBodyBytes: MAX_MASTODON_ANSWER_BYTES,
        signal: req.signal,
      },
    );
    if (result.kind === 'response' && result.status >= 200 && result.status <= 299 && result.cut !== null) {
      const code = result.cut === 'limit' ? 'too_large' : result.cut;
      return { kind: 'network_error', code, message: `the answer did not arrive whole (${code})`, latencyMs: result.latencyMs, sent: true };
    }
    return result;
  }
}

/**
 * A `multipart/form-data` body of an image and its description, as `POST /api/v2/media` takes
 * it (`file`, `description`): built by the platform's own FormData encoder, with its boundary.
 */
export async function mediaForm(bytes: Buffer, mimeType: string, description: string): Promise<{ body: Buffer; contentType: string }> {
  const form = new FormData();
  const extension = mimeType.split('/')[1] ?? 'bin';
  form.append('file', new Blob([bytes], { type: mimeType }), `image.${extension === 'jpeg' ? 'jpg' : extension}`);
  form.append('description', description);
  const encoded = new Request('http://herald.invalid/', { method: 'POST', body: form });
  return { body: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type') ?? 'multipart/form-data' };
}
