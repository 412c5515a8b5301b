/** The content fields a post (and each job's payload copy) carries. */
export interface Content {
  text: string;
  title: string | null;
  link: string | null;
  media: string[];
  metadata: Record<string, unknown> | null;
}

/** A partial edit of them, as PATCH /v1/posts/:id and PATCH /v1/dlq/:jobId receive it. */
export interface ContentPatch {
  text?: string | null;
  title?: string | null;
  link?: string | null;
  media?: string[] | null;
  metadata?: Record<string, unknown> | null;
}

/**
 * `current` with `patch` applied. Pure. An absent field keeps its value; `null` clears title,
 * link or metadata; text and media cannot be cleared (callers refuse a `null` for them where
 * that is an error), so a `null` there keeps the value.
 */
export function applyContentPatch<T extends Content>(current: T, patch: ContentPatch): T {
  return {
    ...current,
    text: patch.text ?? current.text,
    title: patch.title === undefined ? current.title : patch.title,
    link: patch.link === undefined ? current.link : patch.link,
    media: patch.media ?? current.media,
    metadata: patch.metadata === undefined ? current.metadata : patch.metadata,
  };
}
