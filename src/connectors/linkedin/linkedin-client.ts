import { HttpResult, send } from '../../common/net/http-client';

export interface LinkedInRequest {
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** The attempt's signal: every call of an attempt stops at its deadline. */
  signal?: AbortSignal;
  /**
   * The caller reads the body of a 2xx answer (a token, an upload URL): one that did not arrive
   * whole is a network failure (total_timeout, attempt_deadline, too_large...), not an answer.
   * A post's 201 needs only its headers, and an error status stands however much of its body came.
   */
  needBody?: boolean;
}

export interface LinkedInClientOptions {
  allowPrivate: boolean;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
}

/** Answers are small JSON; an upload answer has no body. Anything longer is cut off. */
export const MAX_LINKEDIN_ANSWER_BYTES = 256 * 1024;

/**
 * LinkedIn calls through Herald's outbound layer (common/net/http-client.ts): the SSRF guard,
 * a connect timeout and a total deadline per call, the attempt's signal, a cap on the answer,
 * no redirects; every status is handed back as a result for the connector to interpret.
 *
 * This replaced axios: axios's `timeout` is an idle timeout, so a server that sends one byte
 * every few seconds held a call (and one of the account's in-flight slots) for as long as it
 * liked. The shared layer has the total deadline, the byte cap and the signal built in, the
 * same for every platform, so LinkedIn needs no second HTTP client with its own rules.
 */
export class LinkedInClient {
  constructor(private readonly options: LinkedInClientOptions) {}

  async send(req: LinkedInRequest): Promise<HttpResult> {
    const result = await send(
      { method: req.method, url: req.url, headers: req.headers, body: req.body ?? null },
      {
        connectTimeoutMs: this.options.connectTimeoutMs,
        totalTimeoutMs: this.options.totalTimeoutMs,
        allowPrivate: this.options.allowPrivate,
        maxBodyBytes: MAX_LINKEDIN_ANSWER_BYTES,
        signal: req.signal,
      },
    );
    if (req.needBody === true && result.kind === 'response' && result.status >= 200 && result.status <= 299 && result.cut !== null) {
      const code = result.cut === 'limit' ? 'too_large' : result.cut;
      return { kind: 'network_error', code, message: `the answer did not arrive whole (${code})`, latencyMs: result.latencyMs, sent: true };
    }
    return result;
  }
}
