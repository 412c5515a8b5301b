import type { DeliveryJob, PayloadMedia, PublishedPart, ThreadPart } from '../connector.interface';
import { NO_OUTCOME_DETAILS } from '../connector.interface';
import { poisonOutcome } from '../outcome-kit';
import { MastodonStatus, parseAccount, parseJson, parseMedia, parseStatus, parseStatuses } from './mastodon-answers';
import { MastodonCalls, StepFailed } from './mastodon-calls';
import { mediaForm } from './mastodon-client';
import { CLOCK_MARGIN_MS, findPart, mayHavePublished, reachedBack } from './mastodon-lookup';
import { partIdempotencyKey, statusText } from './mastodon-text';

/** Statuses per page of the account's statuses (the most `GET /api/v1/accounts/:id/statuses` gives). */
export const LOOKUP_PAGE_SIZE = 40;
/** Pages read at most when looking for a part an earlier attempt may have published: the 200 newest statuses. */
export const LOOKUP_PAGES = 5;
/**
 * Waits between two looks at an image the instance is still processing (202, then `url: null`):
 * a quarter second first, doubling to 2 s, at most 60 s in all. The attempt's deadline ends the
 * wait sooner; a retry uploads the image again (an upload has no idempotency key; the instance
 * removes images no status uses).
 */
const MEDIA_POLL_FIRST_MS = 250;
const MEDIA_POLL_MAX_MS = 2_000;
const MEDIA_POLL_TOTAL_MS = 60_000;

/**
 * One attempt's publishing: every part not yet in `done`, in order (docs/api.md "Threads"), each
 * a status replying to the previous part's. `done` grows as parts are published (or found), and
 * `warnings` with what the person should know; the caller records both with the outcome, success
 * or not. A failing step throws StepFailed with its outcome.
 *
 * On a retry, the first parts not in `done` are looked up first (an earlier attempt may have
 * published them and lost the answer); once one is not found, the later ones cannot have been
 * published either.
 */
export async function publishParts(
  calls: MastodonCalls,
  job: DeliveryJob,
  accountId: string | null,
  parts: readonly ThreadPart[],
  done: PublishedPart[],
  warnings: string[],
): Promise<void> {
  const thread = parts.length > 1;
  const media = new Map(job.media.map((m) => [m.id, m]));
  const options = job.payload.mastodon ?? { visibility: null, spoilerText: null };
  let look = mayHavePublished(job);
  for (let index = done.length; index < parts.length; index++) {
    const part = parts[index];
    const label = thread ? `part ${index + 1} of ${parts.length}` : 'the status';
    const text = statusText(part.text, part.link);
    const replyTo = index > 0 ? { id: done[index - 1].uri, label: `part ${index}` } : null;
    const keep = (status: MastodonStatus): void => {
      done.push({ index, uri: status.id, cid: '', url: status.url });
    };
    if (look) {
      const step = `looking for ${label} among the account's statuses (an earlier attempt may have published it)`;
      accountId ??= await accountIdOf(calls, step);
      const found = await lookUp(
        calls,
        accountId,
        { text, spoilerText: options.spoilerText ?? '', inReplyToId: replyTo?.id ?? null, scheduledAt: job.payload.scheduledAt },
        step,
      );
      if (found === 'not searched to the end') {
        warnings.push(
          `${label}: the account's ${LOOKUP_PAGES * LOOKUP_PAGE_SIZE} newest statuses do not reach back to when this job was scheduled; it was sent again with its idempotency key, which the instance honours for about an hour`,
        );
      } else if (found) {
        warnings.push(
          `${label} was already published by an earlier attempt whose answer was lost (status ${found.id}): kept, not posted again`,
        );
        keep(found);
        continue;
      }
      look = false;
    }
    const mediaIds: string[] = [];
    for (const [i, id] of part.media.entries()) {
      mediaIds.push(await upload(calls, media.get(id)!, thread ? `uploading image ${i + 1} of ${label}` : `uploading image ${i + 1}`));
    }
    const step = `creating ${label}`;
    const body = {
      status: text,
      ...(mediaIds.length > 0 ? { media_ids: mediaIds } : {}),
      ...(replyTo ? { in_reply_to_id: replyTo.id } : {}),
      ...(options.spoilerText ? { spoiler_text: options.spoilerText } : {}),
      ...(options.visibility ? { visibility: options.visibility } : {}),
    };
    const res = await calls.call(
      {
        method: 'POST',
        path: '/api/v1/statuses',
        json: body,
        headers: { 'idempotency-key': partIdempotencyKey(job.idempotencyKey, index, thread) },
      },
      step,
      replyTo,
    );
    const status = parseStatus(parseJson(res.body));
    if (status === null) throw calls.unreadable(res, step, 'a status without an id');
    keep(status);
  }
}

/**
 * The part among the account's own statuses since the job was scheduled (less CLOCK_MARGIN_MS),
 * newest first, at most LOOKUP_PAGES pages: null when it is not there, 'not searched to the end'
 * when the pages ran out first. A failed look throws (its outcome ends the attempt): posting
 * without knowing could publish the part twice.
 */
async function lookUp(
  calls: MastodonCalls,
  accountId: string,
  part: { text: string; spoilerText: string; inReplyToId: string | null; scheduledAt: string },
  step: string,
): Promise<MastodonStatus | null | 'not searched to the end'> {
  const notBefore = new Date(new Date(part.scheduledAt).getTime() - CLOCK_MARGIN_MS);
  let maxId: string | null = null;
  for (let page = 0; page < LOOKUP_PAGES; page++) {
    const query = `limit=${LOOKUP_PAGE_SIZE}&exclude_reblogs=true${maxId ? `&max_id=${encodeURIComponent(maxId)}` : ''}`;
    const res = await calls.call({ method: 'GET', path: `/api/v1/accounts/${encodeURIComponent(accountId)}/statuses?${query}` }, step);
    const statuses = parseStatuses(parseJson(res.body));
    if (statuses === null) throw calls.unreadable(res, step, 'not a list of statuses');
    const found = findPart(statuses, { ...part, notBefore });
    if (found) return found;
    if (reachedBack(statuses, LOOKUP_PAGE_SIZE, notBefore)) return null;
    maxId = statuses[statuses.length - 1].id;
  }
  return 'not searched to the end';
}

/** The account's id on its instance, for a config stored without one. */
async function accountIdOf(calls: MastodonCalls, step: string): Promise<string> {
  const res = await calls.call({ method: 'GET', path: '/api/v1/accounts/verify_credentials' }, step);
  const account = parseAccount(parseJson(res.body));
  if (account === null) throw calls.unreadable(res, step, 'no account id');
  return account.id;
}

/**
 * `POST /api/v2/media` (multipart `file` and `description`, the alt text). 200: processed, it has
 * a `url`; 202: still processing (`url: null`): `GET /api/v1/media/:id` until it has one (206
 * while processing), waiting a little longer each time, within the attempt's deadline.
 */
async function upload(calls: MastodonCalls, item: PayloadMedia, step: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await item.read();
  } catch (err) {
    throw new StepFailed(poisonOutcome(`${step}: the image could not be read: ${(err as Error).message}`));
  }
  const res = await calls.call({ method: 'POST', path: '/api/v2/media', multipart: await mediaForm(bytes, item.mimeType, item.alt) }, step);
  const media = parseMedia(parseJson(res.body));
  if (media === null) throw calls.unreadable(res, step, 'no media id');
  if (media.url !== null) return media.id;
  const waitStep = `${step}: waiting for the instance to process it`;
  let waited = 0;
  for (let delay = MEDIA_POLL_FIRST_MS; waited < MEDIA_POLL_TOTAL_MS; delay = Math.min(delay * 2, MEDIA_POLL_MAX_MS)) {
    await calls.sleep(delay);
    waited += delay;
    const check = await calls.call({ method: 'GET', path: `/api/v1/media/${encodeURIComponent(media.id)}` }, waitStep);
    if (check.status === 200 && parseMedia(parseJson(check.body))?.url) return media.id;
  }
  throw new StepFailed({
    ...NO_OUTCOME_DETAILS,
    errorClass: 'transient',
    message: `${calls.host} was still processing the image after ${MEDIA_POLL_TOTAL_MS / 1000} s (${step}); it is uploaded again on the next attempt`,
  });
}
