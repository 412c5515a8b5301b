import { canonicalJson } from '../common/canonical-json';
import { invalidInput } from '../common/errors';
import type { JobPayload } from '../connectors/connector.interface';
import { applyContentPatch, ContentPatch } from '../posts/content-patch';

/** The editable fields of a job's payload, as PATCH /v1/dlq/:jobId receives them. */
export type PayloadEdit = ContentPatch;

export const EDITABLE_FIELDS = ['text', 'title', 'link', 'media', 'metadata'] as const;
type Editable = (typeof EDITABLE_FIELDS)[number];

export interface AppliedEdit {
  next: JobPayload;
  /** The fields that changed, before and after (the audit trail's row). Empty: nothing changed. */
  before: Partial<Pick<JobPayload, Editable>>;
  after: Partial<Pick<JobPayload, Editable>>;
}

/**
 * The payload after `edit`, and what changed. Pure. An absent field keeps its value; `null`
 * clears title, link or metadata. Text and media cannot be null: a post always has text (as in
 * POST /v1/posts), and `[]` is how to remove every image. The DTO has already applied
 * POST /v1/posts' field rules; the platform's own rules are checked by the caller on `next`.
 */
export function applyEdit(current: JobPayload, edit: PayloadEdit): AppliedEdit {
  if (EDITABLE_FIELDS.every((f) => edit[f] === undefined)) {
    throw invalidInput(`nothing to edit: give at least one of ${EDITABLE_FIELDS.join(', ')}`);
  }
  if (edit.text === null) throw invalidInput('text cannot be null: a post needs text');
  if (edit.media === null) throw invalidInput('media cannot be null: use [] to remove every image');

  const next: JobPayload = applyContentPatch(current, edit);
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
