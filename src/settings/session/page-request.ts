import type { Request, Response } from 'express';
import type { HeraldConfig } from '../../config/config';
import type { PageSession } from './sessions.service';

/** A request of the settings page, with its session once the guard has found it. */
export type PageRequest = Request & { page?: PageSession; cookies?: Record<string, string | undefined> };

export const SESSION_COOKIE = 'herald_session';
/** Double-submit token of the login form (there is no session yet to keep it in). */
export const LOGIN_COOKIE = 'herald_login';
/** Ties LinkedIn's redirect back to the browser that started the flow (see the migration). */
export const OAUTH_COOKIE = 'herald_linkedin';

/** The page is served over https when PUBLIC_URL is: then every cookie is `Secure`. */
export const isHttps = (config: Pick<HeraldConfig, 'publicUrl'>): boolean => config.publicUrl.startsWith('https:');

export function setSessionCookie(res: Response, config: HeraldConfig, token: string): void {
  // No Max-Age: the server decides when a session ends; the browser forgets it when closed.
  res.cookie(SESSION_COOKIE, token, { httpOnly: true, secure: isHttps(config), sameSite: 'strict', path: '/settings' });
}

export function clearSessionCookie(res: Response, config: HeraldConfig): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, secure: isHttps(config), sameSite: 'strict', path: '/settings' });
}

export function cookie(req: PageRequest, name: string): string | undefined {
  const value: unknown = req.cookies?.[name];
  return typeof value === 'string' ? value : undefined;
}

export function requirePage(req: PageRequest): PageSession {
  if (!req.page) throw new Error('the settings session guard did not run on this route');
  return req.page;
}

/** Who is logging in, for the wrong-key slow-down: the socket's address (proxies are not trusted). */
export function clientAddress(req: Request): string {
  return (req.socket.remoteAddress ?? 'unknown').slice(0, 100);
}
