import { canonicalJson } from '../common/canonical-json';
import { conflict, invalidInput } from '../common/errors';
import type { JobPayload, PublishedPart, ThreadPart } from '../connectors/connector.interface';
import { applyContentPatch, ContentPatch } from '../posts/content-patch';

/** An edit of one further part of a thread: `index` is its place in `thread` (0: the thread's first further part). */
export interface ThreadPartEdit {
  index: number;
  text?: string | null;
  link?: string | null;
  media?: string[] | null;
}

/** The editable fields of a job's payload, as PATCH /v1/dlq/:jobId receives them. */
export type PayloadEdit = ContentPatch & { thread?: ThreadPartEdit[] | null };

export const EDITABLE_FIELDS = ['text', 'title', 'link', 'media', 'metadata', 'thread'] as const;
type Editable = (typeof EDITABLE_FIELDS)[number];
/** The fields of the first part: a thread whose first part is published cannot change them. */
const FIRST_PART_FIELDS = ['text', 'title', 'link', 'media'] as const;

export interface AppliedEdit {
  next: JobPayload;
  /** The fields that changed, before and after (the audit trail's row). Empty: nothing changed. */
  before: Partial<Pick<JobPayload, Editable>>;
  after: Partial<Pick<JobPayload, Editable>>;
}

/** "part 2 (thread.0)": how a person and the API both find a part. */
const partName = (index: number) => `part ${index + 2} (thread.${index})`;

/**
 * The thread after `edits`, part by part. Pure. A part already published (`published`) cannot
 * change: 409 naming it and where it is. An unknown or repeated index, or a null text or media,
 * is a 400.
 */
function applyThreadEdit(
  current: ThreadPart[] | undefined,
  edits: ThreadPartEdit[],
  published: ReadonlyMap<number, PublishedPart>,
): ThreadPart[] {
  if (!current || current.length === 0) throw invalidInput('thread: this job publishes a single post, it has no further parts to edit');
  const next = current.map((p) => ({ ...p }));
  const seen = new Set<number>();
  edits.forEach((e, i) => {
    if (!Number.isInteger(e.index) || e.index < 0 || e.index >= current.length) {
      const range =
        current.length === 1 ? 'the thread has one further part, 0' : `the thread's further parts are 0 to ${current.length - 1}`;
      throw invalidInput(`thread.${i}.index: there is no part ${e.index} (${range})`);
    }
    if (seen.has(e.index)) throw invalidInput(`thread.${i}.index: part ${e.index} is edited twice`);
    seen.add(e.index);
    if (e.text === null) throw invalidInput(`thread.${i}.text cannot be null: a part needs text`);
    if (e.media === null) throw invalidInput(`thread.${i}.media cannot be null: use [] to remove every image`);
    const part = next[e.index];
    const changed: ThreadPart = {
      text: e.text ?? part.text,
      link: e.link === undefined ? part.link : e.link,
      media: e.media ?? part.media,
    };
    const done = published.get(e.index + 1);
    if (done && canonicalJson(changed) !== canonicalJson(part)) {
      throw conflict(`${partName(e.index)} is already published (${done.uri}) and cannot be changed; edit the parts after it`);
    }
    next[e.index] = changed;
  });
  return next;
}

/**
 * The payload after `edit`, and what changed. Pure. An absent field keeps its value; `null`
 * clears title, link or metadata. Text and media cannot be null: a post always has text (as in
 * POST /v1/posts), and `[]` is how to remove every image. A thread's parts are edited one by
 * one (`thread: [{ index, text?, link?, media? }]`); a part already published (`published`,
 * the job's parts) cannot change, nor can the first part's fields once it is out. The DTO has
 * already applied POST /v1/posts' field rules; the platform's own rules are checked by the
 * caller on `next`.
 */
export function applyEdit(current: JobPayload, edit: PayloadEdit, published: readonly PublishedPart[] = []): AppliedEdit {
  if (EDITABLE_FIELDS.every((f) => edit[f] === undefined)) {
    throw invalidInput(`nothing to edit: give at least one of ${EDITABLE_FIELDS.join(', ')}`);
  }
  if (edit.text === null) throw invalidInput('text cannot be null: a post needs text');
  if (edit.media === null) throw invalidInput('media cannot be null: use [] to remove every image');
  if (edit.thread === null) throw invalidInput('thread cannot be null: edit its parts one by one');
  const done = new Map(published.map((p) => [p.index, p]));

  const next: JobPayload = applyContentPatch(current, edit);
  if (edit.thread !== undefined) next.thread = applyThreadEdit(current.thread, edit.thread, done);
  const first = done.get(0);
  if (first && FIRST_PART_FIELDS.some((f) => canonicalJson(current[f] ?? null) !== canonicalJson(next[f] ?? null))) {
    throw conflict(`part 1 (text, title, link, media) is already published (${first.uri}) and cannot be changed; edit the parts after it`);
  }
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const f of EDITABLE_FIELDS) {
    // Compared as canonical JSON: reordering a metadata object's keys is not an edit.
    if (canonicalJson(current[f] ?? null) !== canonicalJson(next[f] ?? null)) {
      before[f] = current[f] ?? null;
      after[f] = next[f] ?? null;
    }
  }
  return { next, before, after };
}
