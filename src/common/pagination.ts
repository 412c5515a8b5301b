import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { invalidInput } from './errors';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

export class PageQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: 'items per page' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number;

  @ApiPropertyOptional({ maxLength: 200, description: 'the `nextCursor` of the previous page' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/**
 * Keyset cursor over (created_at DESC, id DESC): stable while rows are inserted. The time is the
 * last row's created_at in microseconds since the epoch, as text: timestamptz keeps µs, a Date
 * only ms, and a keyset truncated to the millisecond would skip the rows that share the last
 * row's millisecond (or repeat them). List queries select it as `cursorMicros`
 * (`(extract(epoch FROM created_at) * 1000000)::bigint::text`) and compare with
 * `'epoch'::timestamptz + $n::bigint * interval '1 microsecond'`, which is exact.
 */
export interface Keyset {
  micros: string;
  id: string;
}

/** A list row with its keyset time. */
export type Listed<R> = R & { cursorMicros: string };

export function encodeCursor(k: Keyset): string {
  return Buffer.from(`${k.micros}|${k.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined): Keyset | null {
  if (cursor === undefined) return null;
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  const [time, id] = decoded.split('|');
  if (!time || !id || !/^[0-9a-f-]{36}$/i.test(id)) throw invalidInput('cursor is not a cursor this API returned');
  if (/^\d{1,17}$/.test(time)) return { micros: time, id };
  // A cursor from before microsecond cursors (an ISO time): it still continues where it was.
  const ms = /^\d{4}-\d\d-\d\dT/.test(time) ? new Date(time).getTime() : NaN;
  if (Number.isNaN(ms) || ms < 0) throw invalidInput('cursor is not a cursor this API returned');
  return { micros: String(ms * 1000), id };
}

/** Fetch limit + 1 rows; the extra one tells whether a next page exists. */
export function toPage<R extends { id: string; cursorMicros: string }, T>(rows: R[], limit: number, map: (row: R) => T): Page<T> {
  const more = rows.length > limit;
  const pageRows = more ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return { data: pageRows.map(map), nextCursor: more && last ? encodeCursor({ micros: last.cursorMicros, id: last.id }) : null };
}
