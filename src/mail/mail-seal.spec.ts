import { randomBytes, randomUUID } from 'node:crypto';
import { SecretBox, SecretDecryptionError } from '../common/crypto/secret-box';
import { MAIL_KINDS } from './mail-driver';
import { openBody, sealBody, SEALED_KINDS, sealsBody } from './mail-seal';

describe('mail-seal', () => {
  const box = new SecretBox(randomBytes(32));
  const body = {
    html: '<a href="https://h.example/settings/invitation?token=abc">Join</a>',
    text: 'Join: https://h.example/settings/invitation?token=abc',
  };

  it('seals the kinds that carry a one-use link, and only those', () => {
    expect(SEALED_KINDS).toEqual(['invitation', 'password_reset', 'recipient_confirmation']);
    expect(MAIL_KINDS.filter(sealsBody)).toEqual(SEALED_KINDS);
  });

  it('stores no part of a link body in the clear, and opens it again on its own row', () => {
    const id = randomUUID();
    const stored = sealBody(box, id, 'invitation', body);
    expect(JSON.stringify(stored)).not.toContain('token=');
    expect(JSON.stringify(stored)).not.toContain('Join');
    expect(openBody(box, id, 'invitation', stored)).toEqual(body);
  });

  it('keeps digests and alerts as they are', () => {
    const id = randomUUID();
    expect(sealBody(box, id, 'digest', body)).toEqual(body);
    expect(openBody(box, id, 'alert', body)).toEqual(body);
  });

  it('refuses a body moved to another row, its parts swapped, or another key', () => {
    const id = randomUUID();
    const stored = sealBody(box, id, 'password_reset', body);
    expect(() => openBody(box, randomUUID(), 'password_reset', stored)).toThrow(SecretDecryptionError);
    expect(() => openBody(box, id, 'password_reset', { html: stored.text, text: stored.html })).toThrow(SecretDecryptionError);
    expect(() => openBody(new SecretBox(randomBytes(32)), id, 'password_reset', stored)).toThrow(SecretDecryptionError);
  });
});
