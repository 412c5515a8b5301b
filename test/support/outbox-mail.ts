import { simpleParser } from 'mailparser';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TestApp } from './app';
import { drainMail } from './mail';

/**
 * Mail of an app without SMTP_URL, read as an operator would: sends what is due, then reads the
 * newest .eml file to `address` in HERALD_DATA_DIR/outbox.
 */
export async function lastOutboxMailTo(t: TestApp, address: string): Promise<{ text: string; kind: string }> {
  await drainMail(t);
  const dir = path.join(t.config.dataDir, 'outbox');
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.eml'));
  const mails = await Promise.all(
    files.map(async (f) => ({
      mail: await simpleParser(fs.readFileSync(path.join(dir, f))),
      at: fs.statSync(path.join(dir, f)).mtimeMs,
    })),
  );
  const to = mails
    .filter(({ mail }) => [mail.to ?? []].flat().some((a) => a.value.some((v) => v.address === address)))
    .sort((a, b) => a.at - b.at);
  const last = to[to.length - 1]?.mail;
  if (!last) throw new Error(`no mail to ${address} among ${files.join(', ')}`);
  const kind = last.headers.get('x-herald-kind');
  return { text: last.text ?? '', kind: typeof kind === 'string' ? kind : '' };
}

/** The one-use link in a mail's text ('' when there is none). */
export const linkIn = (text: string): string => /https?:\/\/\S+token=[A-Za-z0-9_-]{43}/.exec(text)?.[0] ?? '';
