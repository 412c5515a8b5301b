import type { HttpResult } from '../../common/net/http-client';
import { untilAborted } from '../../common/net/deadline';
import type { HeraldConfig } from '../../config/config';
import type { DeliveryOutcome } from '../connector.interface';
import { MastodonClient, MastodonRequest } from './mastodon-client';
import { mastodonOutcome, MastodonOutcomeContext } from './mastodon-outcome';

/** A step that failed, with the outcome that ends the attempt. */
export class StepFailed extends Error {
  constructor(readonly outcome: DeliveryOutcome) {
    super(outcome.message ?? 'failed');
    this.name = 'StepFailed';
  }
}

/** A status a call replies to (`in_reply_to_id`), named as the person counts parts. */
export type ReplyTo = { id: string; label: string } | null;

export type HttpAnswer = HttpResult & { kind: 'response' };

/**
 * The calls of one attempt (or one check) to one instance with one token: every call goes
 * through the guarded client with the attempt's signal, and anything but a 2xx ends the attempt
 * with its outcome (mastodonOutcome), thrown as StepFailed.
 */
export class MastodonCalls {
  readonly host: string;

  constructor(
    private readonly client: MastodonClient,
    private readonly http: HeraldConfig['http'],
    readonly instanceUrl: string,
    readonly token: string,
    readonly signal?: AbortSignal,
  ) {
    this.host = new URL(instanceUrl).host;
  }

  /** One call: its 2xx answer, or StepFailed with the outcome of anything else. */
  async call(req: Omit<MastodonRequest, 'instanceUrl' | 'token' | 'signal'>, step: string, replyTo: ReplyTo = null): Promise<HttpAnswer> {
    const res = await this.send(req);
    if (res.kind === 'response' && res.status >= 200 && res.status <= 299) return res;
    throw new StepFailed(mastodonOutcome(res, this.context(step, replyTo)));
  }

  /** One call, whatever it answers. */
  send(req: Omit<MastodonRequest, 'instanceUrl' | 'token' | 'signal'>): Promise<HttpResult> {
    return this.client.send({ ...req, instanceUrl: this.instanceUrl, token: this.token, signal: this.signal });
  }

  /** A 2xx whose body is not what the call returns: the instance (or something in front of it) is broken; retried. */
  unreadable(res: HttpAnswer, step: string, what: string): StepFailed {
    return new StepFailed({
      ...mastodonOutcome({ ...res, status: 502 }, this.context(step, null)),
      httpStatus: res.status,
      message: `${this.host} answered ${res.status} with ${what} while ${step}`,
    });
  }

  /** A wait that ends (as StepFailed's network outcome, through the caller) when the attempt's signal fires. */
  async sleep(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await untilAborted(
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, ms);
        }),
        this.signal,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  context(step: string, replyTo: ReplyTo): MastodonOutcomeContext {
    return {
      step,
      now: new Date(),
      secrets: [this.token],
      excerptBytes: this.http.responseExcerptBytes,
      host: this.host,
      connectTimeoutMs: this.http.connectTimeoutMs,
      totalTimeoutMs: this.http.totalTimeoutMs,
      replyTo,
    };
  }
}
