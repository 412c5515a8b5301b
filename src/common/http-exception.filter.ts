import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { STATUS_CODES } from 'node:http';
import { DomainError, httpStatusFor } from './errors';

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  /** Health checks only: the state of each dependency. */
  details?: Record<string, { status: string; message?: string }>;
}

export function errorBody(statusCode: number, message: string): ErrorBody {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message };
}

/** Errors raised by body-parser before a route runs (malformed JSON, too large, bad charset). */
interface BodyParserError {
  type: string;
  status: number;
  /** entity.too.large: the limit in bytes (1 MB but on POST /v1/posts/batch). */
  limit?: number;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { type?: unknown }).type === 'string' &&
    typeof (err as { status?: unknown }).status === 'number'
  );
}

/** A body-parser limit in MB as the messages say it ("1", "5"); 1 when the error does not carry it. */
function megabytes(limit: number | undefined): string {
  return typeof limit === 'number' && limit > 0 ? String(Math.round((limit / 1_048_576) * 10) / 10) : '1';
}

/**
 * Maps every error onto one JSON shape `{ statusCode, error, message }`. Unknown errors
 * become a 500 whose message says nothing about internals; the stack goes to the log only.
 */
export function toErrorBody(exception: unknown, logger?: Logger): ErrorBody {
  if (exception instanceof DomainError) return errorBody(httpStatusFor(exception.code), exception.message);
  if (exception instanceof HttpException) {
    // getStatus() is typed as a number; the comparisons below are with HttpStatus members.
    const status: HttpStatus = exception.getStatus();
    const response = exception.getResponse();
    let message: string = exception.message;
    if (typeof response === 'object' && response !== null) {
      const details = (response as { details?: ErrorBody['details'] }).details;
      if (details && typeof details === 'object') {
        // @nestjs/terminus answers 503 with the state of each check: keep it, and say it.
        const down = Object.entries(details).filter(([, d]) => d.status !== 'up');
        const summary = down.map(([name, d]) => `${name} is down${d.message ? ` (${d.message})` : ''}`).join('; ');
        return { ...errorBody(status, summary || 'not ready'), details };
      }
      const m = (response as { message?: unknown }).message;
      if (Array.isArray(m)) message = m.join('; ');
      else if (typeof m === 'string') message = m;
    }
    if (status === HttpStatus.NOT_FOUND && /^Cannot (GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) /.test(message)) {
      message = `No route ${message.replace(/^Cannot /, '')}`;
    }
    // Nest's own 413s say the limit in their words; mapBodyParserError's already say it in ours (with the route's limit).
    if (status === HttpStatus.PAYLOAD_TOO_LARGE && !/^The request body is larger than the [\d.]+ MB limit$/.test(message)) {
      message = 'The request body is larger than the 1 MB limit';
    }
    return errorBody(status, message);
  }
  if (isBodyParserError(exception)) {
    switch (exception.type) {
      case 'entity.parse.failed':
        return errorBody(400, 'The request body is not valid JSON');
      case 'entity.too.large':
        return errorBody(413, `The request body is larger than the ${megabytes(exception.limit)} MB limit`);
      case 'entity.too.deep':
        return errorBody(400, 'The request body nests deeper than 64 levels'); // MAX_JSON_DEPTH (request-limits.ts)
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return errorBody(415, 'The request body must be UTF-8 JSON');
      default:
        if (exception.status >= 400 && exception.status < 500) {
          return errorBody(exception.status, 'The request body could not be read');
        }
    }
  }
  logger?.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
  return errorBody(500, 'Internal server error');
}

/**
 * Express error middleware, registered right after the body parsers. Nest's router turns
 * body-parser's SyntaxError into `new BadRequestException(err.message)` before any filter runs,
 * which drops `type` and answers with V8's JSON.parse message, and that message quotes a slice
 * of the body ("Unexpected token 'h', ..."assword": hunter2"... is not valid JSON"): it could put
 * a secret from the request into the answer. Mapping here keeps the wording of toErrorBody.
 */
export function mapBodyParserError(err: unknown, _req: unknown, _res: unknown, next: (err?: unknown) => void): void {
  if (!isBodyParserError(err)) {
    next(err);
    return;
  }
  const body = toErrorBody(err);
  next(new HttpException(body, body.statusCode));
}

@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Exceptions');

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const body = toErrorBody(exception, this.logger);
    if (res.headersSent) return;
    res.status(body.statusCode).json(body);
  }
}
