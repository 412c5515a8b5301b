import { invalidInput } from '../common/errors';
import type { DlqKeyset } from './dead-letter.repository';

/**
 * The DLQ list's cursor: the last row's death time in microseconds and its id. Microseconds,
 * not an ISO string: timestamptz keeps µs, a Date only ms, and a truncated keyset would skip
 * rows that died within the same millisecond (a bulk failure does that by the hundred).
 */
export function encodeDlqCursor(micros: string, id: string): string {
  return Buffer.from(`${micros}|${id}`, 'utf8').toString('base64url');
}

export function decodeDlqCursor(cursor: string | undefined): DlqKeyset | null {
  if (cursor === undefined) return null;
  const [micros, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (!micros || !/^\d{1,17}$/.test(micros) || !id || !/^[0-9a-f-]{36}$/i.test(id)) {
    throw invalidInput('cursor is not a cursor this API returned');
  }
  return { micros, id };
}
