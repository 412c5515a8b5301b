import type { Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { errorBody } from './http-exception.filter';

/**
 * Deepest nesting a JSON body may have. Herald's bodies nest 3 or 4 levels (a post's metadata
 * a few more). class-transformer and class-validator recurse once per level: 10,000 nested
 * arrays — 20 KB, well under the 1 MB limit — overflowed the stack and answered 500.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether JSON text nests deeper than `limit` (brackets outside strings); linear, stops at the first excess. */
export function jsonNestsDeeperThan(text: Buffer, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** body-parser `verify` hook for JSON: refuses a too-deep body before it is parsed (400, see toErrorBody). */
export function refuseDeepJson(_req: unknown, _res: unknown, body: Buffer): void {
  if (jsonNestsDeeperThan(body, MAX_JSON_DEPTH)) {
    throw Object.assign(new Error(`JSON nests deeper than ${MAX_JSON_DEPTH} levels`), { type: 'entity.too.deep' });
  }
}

/**
 * Requests Node's HTTP parser refuses before Express sees them (headers or URL over 16 KB,
 * malformed HTTP) get the JSON error shape too, instead of Node's bare status line.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: Error & { code?: string }, socket: Socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const message =
      status === 431
        ? "The request's headers (the URL included) are larger than the 16 KB limit"
        : status === 408
          ? 'The request took too long to arrive'
          : 'The request is not valid HTTP';
    const body = JSON.stringify(errorBody(status, message));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
