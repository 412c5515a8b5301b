import { simpleParser } from 'mailparser';
/**
 * A scanner for secrets in what a run left behind: logs, API answers, pages, mails, requests
 * to receivers, rows at rest. test/secret-scan.test.ts drives a full scenario and feeds it.
 */

/** One piece of captured text: where it came from (`source`) and what it was (`label`). */
export interface Capture {
  /** e.g. `log`, `api`, `page`, `mail`, `outbound`, `database` */
  source: string;
  /** e.g. `POST /v1/accounts → 201` */
  label: string;
  text: string;
}

/** A secret by value; `allowedIn` says where it may appear (shown once, sent to its own platform). */
export interface Secret {
  name: string;
  value: string;
  allowedIn?: (capture: Capture) => boolean;
}

/** A kind of secret by shape (e.g. any JWT, any `whsec_…`), for values the test cannot know. */
export interface SecretPattern {
  name: string;
  pattern: RegExp;
  allowedIn?: (capture: Capture, match: string) => boolean;
}

export interface Finding {
  secret: string;
  source: string;
  label: string;
  /** The text around the hit, the hit itself replaced by ‹name›. */
  context: string;
}

/** The forms a value takes on its way into text: as is, JSON-escaped, URL-encoded, base64. */
export function encodings(value: string): string[] {
  const forms = new Set([
    value,
    JSON.stringify(value).slice(1, -1),
    encodeURIComponent(value),
    Buffer.from(value, 'utf8').toString('base64'),
  ]);
  // Shorter than this, a value would match by chance (and no secret here is that short).
  return [...forms].filter((f) => f.length >= 12);
}

function around(text: string, at: number, length: number, name: string): string {
  const start = Math.max(0, at - 80);
  const end = Math.min(text.length, at + length + 80);
  return `${text.slice(start, at)}‹${name}›${text.slice(at + length, end)}`.replace(/\s+/g, ' ');
}

/** Every place a secret appears where it is not allowed. */
export function scanForSecrets(captures: Capture[], secrets: Secret[], patterns: SecretPattern[]): Finding[] {
  const findings: Finding[] = [];
  for (const capture of captures) {
    for (const secret of secrets) {
      if (secret.allowedIn?.(capture)) continue;
      for (const form of encodings(secret.value)) {
        const at = capture.text.indexOf(form);
        if (at >= 0) {
          findings.push({
            secret: secret.name,
            source: capture.source,
            label: capture.label,
            context: around(capture.text, at, form.length, secret.name),
          });
          break;
        }
      }
    }
    for (const p of patterns) {
      const flags = p.pattern.flags.includes('g') ? p.pattern.flags : `${p.pattern.flags}g`;
      for (const m of capture.text.matchAll(new RegExp(p.pattern.source, flags))) {
        if (p.allowedIn?.(capture, m[0])) continue;
        findings.push({
          secret: p.name,
          source: capture.source,
          label: capture.label,
          context: around(capture.text, m.index ?? 0, m[0].length, p.name),
        });
        break;
      }
    }
  }
  return findings;
}

/** Whether a capture holds `value` in any of its forms (to prove the scan can see what it looks for). */
export function contains(capture: Capture, value: string): boolean {
  return encodings(value).some((f) => capture.text.includes(f));
}

/**
 * A mail as the scan reads it: the raw source as it travelled (envelope, headers, encoded
 * parts), then the same mail decoded (headers, text and HTML parts as `mailparser` reads them). A
 * secret in a body may be quoted-printable or base64 and cut across lines in the raw source;
 * decoded, it is whole.
 */
export async function mailCapture(source: string, label: string, raw: string): Promise<Capture> {
  const parsed = await simpleParser(raw);
  const headers = [...parsed.headers.entries()].map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join('\n');
  const decoded = [headers, parsed.text ?? '', typeof parsed.html === 'string' ? parsed.html : ''].join('\n\n');
  return { source, label, text: `${raw}\n\n---- decoded ----\n${decoded}` };
}
