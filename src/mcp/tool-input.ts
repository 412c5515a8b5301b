import type { Type } from '@nestjs/common';
import { invalidInput } from '../common/errors';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { createValidationPipe } from '../common/validation';

/**
 * A tool's arguments checked as the API checks a request: class-validator on the same DTO
 * classes, through the same ValidationPipe (src/common/validation.ts: unknown fields refused,
 * unstorable text refused, one message per field), so a refusal is the REST 400, word for word.
 * A body's fields are checked as a body, a list's filters as a query string's.
 */
const pipe = createValidationPipe();

export async function asBody<T extends object>(dto: Type<T>, value: Record<string, unknown>): Promise<T> {
  return (await pipe.transform(value, { type: 'body', metatype: dto })) as T;
}

export async function asQuery<T extends object>(dto: Type<T>, value: Record<string, unknown>): Promise<T> {
  return (await pipe.transform(value, { type: 'query', metatype: dto })) as T;
}

/** Splits `args` into the fields named in `keys` and the rest. */
export function take(args: Record<string, unknown>, keys: readonly string[]): [Record<string, unknown>, Record<string, unknown>] {
  const taken: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) (keys.includes(k) ? taken : rest)[k] = v;
  return [taken, rest];
}

/**
 * A path id given as a tool field (`id`, `jobId`): the API's ParseIdPipe, so a malformed or
 * unknown id is the same 404 ("post "…" was not found"); a field that is not a string never
 * reaches a REST path, and is a 400 naming it.
 */
export function pathId(args: Record<string, unknown>, field: string, what: string): string {
  const value = args[field];
  if (value === undefined) throw invalidInput(`${field} is required: the ${what}'s id`);
  if (typeof value !== 'string') throw invalidInput(`${field} must be a string: the ${what}'s id`);
  return new ParseIdPipe(what).transform(value);
}

/** Refuses fields a tool does not take, in the validation pipe's words. */
export function noOtherFields(args: Record<string, unknown>, allowed: readonly string[]): void {
  const unknown = Object.keys(args).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) throw invalidInput(unknown.map((k) => `${k} is not allowed (unknown field)`).join('; '));
}
