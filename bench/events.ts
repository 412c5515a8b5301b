/**
 * The `events` section of `npm run bench` (docs/events.md "Volume"): a burst of posts published
 * with an event endpoint subscribed to post.published, beside the same burst without one. It
 * counts the post.published deliveries, their distinct ids and what the endpoint received (so
 * a duplicate id, written or sent, shows), and what the events cost the posts' own pace.
 */
export interface EventsBurst {
  posts: number;
  /** Posts delivered per second, from the first arrival to the last outcome written (posts' jobs only). */
  postsPerSecond: number;
  /** With the endpoint: the deliveries written, their distinct event ids, the requests the endpoint got and their distinct ids. */
  deliveries: number;
  distinctIds: number;
  received: number;
  receivedDistinct: number;
  /** With the endpoint: from the first arrival until every delivery (posts and events) succeeded. */
  allDoneSeconds: number;
}

/** The section's lines, as `say` prints them. */
export function eventsLines(without: EventsBurst, withEndpoint: EventsBurst, fmt: (n: number, digits?: number) => string): string[] {
  const w = withEndpoint;
  return [
    `without an event endpoint: ${fmt(without.posts)} posts delivered at ${fmt(without.postsPerSecond)} posts/s`,
    `with an endpoint subscribed to post.published: posts at ${fmt(w.postsPerSecond)} posts/s (${fmt(w.postsPerSecond / without.postsPerSecond, 2)}× without); ` +
      `${fmt(w.deliveries)} post.published deliveries written, ${fmt(w.distinctIds)} distinct ids; the endpoint received ${fmt(w.received)} requests, ${fmt(w.receivedDistinct)} distinct ids; ` +
      `posts and events all delivered ${fmt(w.allDoneSeconds, 1)} s after the first arrival`,
  ];
}
