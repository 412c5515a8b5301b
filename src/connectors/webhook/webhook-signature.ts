import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (the Standard Webhooks specification): `webhook-signature` is
 * `v1,` + base64(HMAC-SHA256(key, `${id}.${timestamp}.${body}`)) where the key is the base64-decoded
 * part of a `whsec_…` secret and the timestamp is in unix seconds.
 *
 * This is node:crypto rather than the `standardwebhooks` package's `Webhook#sign`: that computes
 * the HMAC in pure JavaScript (fast-sha256), measured here at 14 µs for a 500-byte body and 170 µs
 * for 30 KB against 3 µs and 20 µs natively, and signing runs once per attempt on the queue's hot
 * path (≥ 5,000/s on 2 cores). webhook-signature.spec.ts proves byte-for-byte equality with the
 * package (the published test vector plus random secrets, ids and bodies), and the integration
 * test verifies real deliveries with the package's `Webhook#verify`.
 */

export const SECRET_PREFIX = 'whsec_';
/** 32 random bytes: inside the 24–64 bytes Standard Webhooks recommends. */
export const SECRET_BYTES = 32;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A fresh `whsec_<base64>` secret. `random` is injectable for tests. */
export function generateSigningSecret(random: (size: number) => Buffer = randomBytes): string {
  return SECRET_PREFIX + random(SECRET_BYTES).toString('base64');
}

/**
 * The HMAC key of a secret in `whsec_<base64>` form (the prefix is optional, as in the reference
 * libraries), or null when it is not one: empty, or not canonical padded base64.
 */
export function signingKey(secret: string): Buffer | null {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (encoded.length === 0 || !BASE64.test(encoded)) return null;
  const key = Buffer.from(encoded, 'base64');
  return key.length === 0 ? null : key;
}

export function isValidSigningSecret(secret: unknown): secret is string {
  return typeof secret === 'string' && signingKey(secret) !== null;
}

/** `v1,<base64 signature>` for one message. Throws only for an invalid secret (a bug upstream). */
export function signWebhook(secret: string, msgId: string, timestampSeconds: number, body: string): string {
  const key = signingKey(secret);
  if (key === null) throw new Error('invalid webhook signing secret');
  const mac = createHmac('sha256', key).update(`${msgId}.${timestampSeconds}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three Standard Webhooks headers for `body` sent at `now`. */
export function signatureHeaders(secret: string, msgId: string, now: Date, body: string): SignatureHeaders {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, msgId, timestamp, body),
  };
}
