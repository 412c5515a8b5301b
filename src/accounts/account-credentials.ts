import type { SecretBox } from '../common/crypto/secret-box';

/**
 * Credentials are sealed with the account id as authenticated context: a ciphertext copied
 * onto another account's row does not decrypt there.
 */
export function sealCredentials(box: SecretBox, accountId: string, credentials: Record<string, unknown>): string {
  return box.encryptJson(credentials, `account:${accountId}`);
}

export function openCredentials(box: SecretBox, accountId: string, sealed: string): Record<string, unknown> {
  return box.decryptJson<Record<string, unknown>>(sealed, `account:${accountId}`);
}
