import { BadRequestException, HttpException } from '@nestjs/common';
import { DomainError, httpStatusFor } from '../common/errors';
import { createValidationPipe } from '../common/validation';

const pipe = createValidationPipe();

/**
 * Runs the API's own DTO rules (class-validator, through the same global pipe) on what a form
 * built: the page never has a second copy of a validation rule. Throws the API's 400.
 */
export async function asDto<T>(metatype: new () => T, value: Record<string, unknown>): Promise<T> {
  return (await pipe.transform(value, { type: 'body', metatype })) as T;
}

/** A problem the page finds in a form before any service sees it (e.g. not an app password). */
export class FormProblem extends Error {}

/**
 * The message a person should see for an error of a service the page called (the API's own
 * wording), or null for anything unexpected (the page filter answers 500 for those).
 */
export function personMessage(err: unknown): { status: number; message: string } | null {
  if (err instanceof FormProblem) return { status: 400, message: err.message };
  if (err instanceof DomainError) {
    const status = httpStatusFor(err.code);
    return status < 500 ? { status, message: err.message } : null;
  }
  if (err instanceof BadRequestException || (err instanceof HttpException && err.getStatus() < 500)) {
    const response = err.getResponse();
    const m = typeof response === 'object' && response !== null ? (response as { message?: unknown }).message : response;
    return { status: err.getStatus(), message: Array.isArray(m) ? m.join('; ') : typeof m === 'string' ? m : err.message };
  }
  return null;
}
