import { simpleParser, ParsedMail } from 'mailparser';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';

/**
 * A real SMTP server on loopback (the `smtp-server` package) for mail tests: it accepts what
 * Herald sends, parses each message with `mailparser`, and can refuse tries on purpose with a
 * 4xx or 5xx reply (RFC 5321 §4.2.1), as real servers do when greylisting or over quota.
 */
export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  parsed: ParsedMail;
}

export interface MailCatcher {
  /** `smtp://127.0.0.1:<port>`: no TLS, no authentication. */
  readonly url: string;
  /** Messages accepted, in order. */
  readonly received: ReceivedMail[];
  /** Every DATA transfer seen, accepted or refused. */
  readonly tries: number;
  /** Refuse the next `n` messages after their data, with this reply code (e.g. 451: try again later). */
  refuseNext(n: number, code: number, message?: string): void;
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export async function startMailCatcher(): Promise<MailCatcher> {
  const received: ReceivedMail[] = [];
  const events = new EventEmitter();
  let refusals: { left: number; code: number; message: string } = { left: 0, code: 451, message: '' };
  let tries = 0;

  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null) => void) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        tries++;
        if (refusals.left > 0) {
          refusals.left--;
          const err = new Error(refusals.message) as Error & { responseCode: number };
          err.responseCode = refusals.code;
          callback(err);
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw).then(
          (parsed) => {
            received.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
              raw,
              parsed,
            });
            events.emit('mail');
            callback();
          },
          (err: Error) => callback(err),
        );
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;

  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    get tries() {
      return tries;
    },
    refuseNext(n, code, message = code >= 500 ? 'Requested action not taken' : 'Try again later') {
      refusals = { left: n, code, message };
    },
    waitFor(n, timeoutMs = 10_000) {
      if (received.length >= n) return Promise.resolve(received.slice());
      return new Promise((resolve, reject) => {
        const on = () => {
          if (received.length < n) return;
          clearTimeout(timer);
          events.off('mail', on);
          resolve(received.slice());
        };
        const timer = setTimeout(() => {
          events.off('mail', on);
          reject(new Error(`the SMTP server got ${received.length} message(s), expected ${n} within ${timeoutMs} ms`));
        }, timeoutMs);
        events.on('mail', on);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
