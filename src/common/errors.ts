/**
 * Domain errors carry a code and a message a person can act on. Services throw these;
 * only the exception filter turns them into HTTP answers (see http-exception.filter.ts).
 */
export enum ErrorCode {
  InvalidInput = 'invalid_input',
  Unauthorized = 'unauthorized',
  Forbidden = 'forbidden',
  NotFound = 'not_found',
  Conflict = 'conflict',
  IdempotencyMismatch = 'idempotency_mismatch',
  PayloadTooLarge = 'payload_too_large',
  UnsupportedMediaType = 'unsupported_media_type',
  Unavailable = 'unavailable',
  TooManyRequests = 'too_many_requests',
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const invalidInput = (message: string) => new DomainError(ErrorCode.InvalidInput, message);
export const notFound = (what: string, id: string) => new DomainError(ErrorCode.NotFound, `${what} ${JSON.stringify(id)} was not found`);
export const conflict = (message: string) => new DomainError(ErrorCode.Conflict, message);
export const forbidden = (message: string) => new DomainError(ErrorCode.Forbidden, message);
export const unauthorized = (message: string) => new DomainError(ErrorCode.Unauthorized, message);

/** HTTP status for each code. The switch is exhaustive: a new code does not compile until mapped. */
export function httpStatusFor(code: ErrorCode): number {
  switch (code) {
    case ErrorCode.InvalidInput:
      return 400;
    case ErrorCode.Unauthorized:
      return 401;
    case ErrorCode.Forbidden:
      return 403;
    case ErrorCode.NotFound:
      return 404;
    case ErrorCode.Conflict:
      return 409;
    case ErrorCode.PayloadTooLarge:
      return 413;
    case ErrorCode.UnsupportedMediaType:
      return 415;
    case ErrorCode.IdempotencyMismatch:
      return 422;
    case ErrorCode.TooManyRequests:
      return 429;
    case ErrorCode.Unavailable:
      return 503;
  }
}
