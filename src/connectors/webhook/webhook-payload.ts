import type { DeliveryJob } from '../connector.interface';

/** The JSON body of a `post.publish` webhook. Field names are a public contract. */
export interface PublishEvent {
  id: string;
  type: 'post.publish';
  timestamp: string;
  data: {
    postId: string;
    jobId: string;
    text: string;
    title: string | null;
    link: string | null;
    media: Array<{ url: string; alt: string; mimeType: string }>;
    scheduledAt: string;
    metadata: Record<string, unknown> | null;
    /**
     * A thread's further parts, in order after the first (text, link, media above); absent for
     * a single post. The whole thread travels in this one delivery.
     */
    thread?: Array<{ text: string; link: string | null; media: Array<{ url: string; alt: string; mimeType: string }> }>;
  };
}

/** The body of a verification ping. */
export interface PingEvent {
  id: string;
  type: 'herald.ping';
  timestamp: string;
  data: Record<string, never>;
}

export class PayloadError extends Error {}

/**
 * The `post.publish` event for one attempt. `id` is the job's idempotency key (the same on every
 * attempt); `timestamp` is this attempt's send time, matching `webhook-timestamp`. Media follow
 * the order of the payload's media ids; an id the worker could not resolve is a PayloadError
 * (poison: sending the post without its image would publish something the user did not write).
 * A thread's parts go in `data.thread`, each with its own media the same way.
 */
export function buildPublishEvent(job: DeliveryJob, now: Date): PublishEvent {
  const postId = job.postId;
  // Every job has a post or an event (job_payloads_post_or_event); an event's is sent as it is.
  if (postId === null) throw new PayloadError('the job has neither a post nor an event to send');
  const byId = new Map(job.media.map((m) => [m.id, m]));
  const mediaOf = (ids: string[]) =>
    ids.map((id) => {
      const item = byId.get(id);
      if (item === undefined) throw new PayloadError(`media ${id} is missing (deleted or expired)`);
      return { url: item.url, alt: item.alt, mimeType: item.mimeType };
    });
  const media = mediaOf(job.payload.media);
  const thread = job.payload.thread?.map((part) => ({ text: part.text, link: part.link, media: mediaOf(part.media) }));
  return {
    id: job.idempotencyKey,
    type: 'post.publish',
    timestamp: now.toISOString(),
    data: {
      postId,
      jobId: job.id,
      text: job.payload.text,
      title: job.payload.title,
      link: job.payload.link,
      media,
      scheduledAt: job.payload.scheduledAt,
      metadata: job.payload.metadata,
      ...(thread && thread.length > 0 ? { thread } : {}),
    },
  };
}

export function buildPingEvent(id: string, now: Date): PingEvent {
  return { id, type: 'herald.ping', timestamp: now.toISOString(), data: {} };
}
