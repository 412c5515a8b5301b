import { createHash } from 'node:crypto';

/**
 * Record keys for posts are TIDs (atproto "Timestamp Identifiers"): 13 characters of
 * base32-sortable (`234567abcdefghijklmnopqrstuvwxyz`) encoding a 64-bit integer whose top bit is
 * 0, then 53 bits of microseconds since the Unix epoch, then a 10-bit clock id. The first 11
 * characters carry the timestamp and the last 2 the clock id, so the first character is one of
 * `234567abcdefghij` (https://atproto.com/specs/tid).
 *
 * Herald does not let the PDS pick the key: it derives it from the job, so that every attempt of a
 * job writes to the same key and a retry after a lost response finds the first post instead of
 * making a second one.
 *
 * - The seconds come from the job's scheduled time: keys sort roughly in posting order, as clients
 *   expect of TIDs (listRecords is ordered by key), and never lie in the future (a job runs at or
 *   after its scheduled time). `scheduledAt` cannot change once an attempt has started (PATCH
 *   /v1/posts is refused then; a DLQ edit changes the idempotency key anyway).
 * - The microseconds within that second (≈ 20 bits) and the clock id (10 bits) come from a
 *   SHA-256 of the idempotency key: two jobs scheduled in the same second get different keys
 *   unless 30 bits of their hashes agree (about one chance in a million for 50 posts in one
 *   second), and a connector that finds a record already at its key still compares its text
 *   before calling it its own.
 */

const S32 = '234567abcdefghijklmnopqrstuvwxyz';
const TID_PATTERN = /^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/;
const MICROS_PER_SECOND = 1_000_000;
/** 2^53 µs: the timestamp field's range (year 2255). */
const MAX_MICROS = 2 ** 53;

function s32(value: bigint, length: number): string {
  let out = '';
  let v = value;
  for (let i = 0; i < length; i++) {
    out = S32[Number(v & 31n)] + out;
    v >>= 5n;
  }
  return out;
}

export function isValidTid(value: string): boolean {
  return TID_PATTERN.test(value);
}

/** The TID for a timestamp (µs since the epoch, < 2^53) and a clock id (0–1023). */
export function encodeTid(micros: number, clockId: number): string {
  if (!Number.isSafeInteger(micros) || micros < 0 || micros >= MAX_MICROS) throw new RangeError(`timestamp out of range: ${micros}`);
  if (!Number.isInteger(clockId) || clockId < 0 || clockId > 1023) throw new RangeError(`clock id out of range: ${clockId}`);
  return s32(BigInt(micros), 11) + s32(BigInt(clockId), 2);
}

export function decodeTid(tid: string): { micros: number; clockId: number } {
  if (!isValidTid(tid)) throw new RangeError(`not a TID: ${tid}`);
  let v = 0n;
  for (const ch of tid) v = (v << 5n) | BigInt(S32.indexOf(ch));
  return { micros: Number(v >> 10n), clockId: Number(v & 1023n) };
}

/**
 * The record key of a job: a valid TID from its idempotency key and scheduled time (ISO 8601).
 * Pure: the same inputs always give the same key.
 */
export function tidForJob(idempotencyKey: string, scheduledAt: string): string {
  const hash = createHash('sha256').update(`herald-bluesky-rkey:${idempotencyKey}`).digest();
  const ms = Date.parse(scheduledAt);
  // An unreadable time (never from the API) still gives a stable key: the hash alone decides.
  const seconds = Number.isFinite(ms) && ms >= 0 ? Math.floor(ms / 1000) : hash.readUInt32BE(8);
  const micros = Math.min(seconds * MICROS_PER_SECOND + (hash.readUInt32BE(0) % MICROS_PER_SECOND), MAX_MICROS - 1);
  const clockId = hash.readUInt16BE(4) & 1023;
  return encodeTid(micros, clockId);
}

/** A thread's parts at most (the first and 25 further ones): their keys are consecutive TIDs. */
export const MAX_THREAD_PARTS_TOTAL = 26;

/**
 * The record key of part `index` (0: the first) of a thread job: fixed by the job's id, the part's
 * index and the scheduled time, so it is known before the part's first attempt and the same on
 * every later one (a retry, a requeue, an edited requeue: the job's id never changes, unlike its
 * idempotency key). The parts' keys are consecutive microseconds within the scheduled second, so
 * they sort in the thread's order; the offset and clock id come from a SHA-256 of the job id, as
 * for single posts (tidForJob). Pure.
 */
export function tidForThreadPart(jobId: string, index: number, scheduledAt: string): string {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_THREAD_PARTS_TOTAL) throw new RangeError(`part index out of range: ${index}`);
  const hash = createHash('sha256').update(`herald-bluesky-thread:${jobId}`).digest();
  const ms = Date.parse(scheduledAt);
  const seconds = Number.isFinite(ms) && ms >= 0 ? Math.floor(ms / 1000) : hash.readUInt32BE(8);
  const offset = hash.readUInt32BE(0) % (MICROS_PER_SECOND - MAX_THREAD_PARTS_TOTAL);
  const micros = Math.min(seconds * MICROS_PER_SECOND + offset + index, MAX_MICROS - 1);
  const clockId = hash.readUInt16BE(4) & 1023;
  return encodeTid(micros, clockId);
}
