import type { Response } from 'express';
import { randomBytes } from 'node:crypto';
import type { HeraldConfig } from '../../config/config';
import { field } from '../page-input';
import { CsrfRefused } from './page-errors';
import { cookie, isHttps, PageRequest, refuseCrossSite } from './page-request';
import { sameSecret } from './same-secret';

/**
 * CSRF for the forms used without a session (accepting an invitation, asking for and using a
 * password-reset link): a double-submit token, in an httpOnly SameSite=Strict cookie scoped to
 * the form's own path and in the form, as the login form does. A form posted from elsewhere
 * has no such cookie.
 */
export const FORM_COOKIE = 'herald_form';

export function issueFormToken(res: Response, config: HeraldConfig, path: string): string {
  const token = randomBytes(32).toString('base64url');
  res.cookie(FORM_COOKIE, token, { httpOnly: true, secure: isHttps(config, res.req), sameSite: 'strict', path });
  return token;
}

export function checkFormToken(req: PageRequest, body: unknown, config: Pick<HeraldConfig, 'publicUrl'>): void {
  refuseCrossSite(req, config);
  const expected = cookie(req, FORM_COOKIE) ?? '';
  if (expected === '' || !sameSecret(field(body, '_csrf'), expected)) throw new CsrfRefused();
}
