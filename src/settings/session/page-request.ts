import type { Request, Response } from 'express';
import type { HeraldConfig } from '../../config/config';
import { CsrfRefused } from './page-errors';
import { crossSiteProblem, originOf } from './same-origin';
import type { PageSession } from '../../people/session.types';

/** A request of the settings page, with its session once the guard has found it. */
export type PageRequest = Request & { page?: PageSession; cookies?: Record<string, string | undefined> };

export const SESSION_COOKIE = 'herald_session';
/** Double-submit token of the login form (there is no session yet to keep it in). */
export const LOGIN_COOKIE = 'herald_login';
/** Ties LinkedIn's redirect back to the browser that started the flow (see the migration). */
export const OAUTH_COOKIE = 'herald_linkedin';

/**
 * The page is served over https when PUBLIC_URL is, or when this request came over https: behind
 * a TLS-terminating proxy that TRUST_PROXY names, Express reads the scheme from its
 * X-Forwarded-Proto (req.secure). Then every cookie is `Secure`.
 */
export const isHttps = (config: Pick<HeraldConfig, 'publicUrl'>, req?: Request): boolean =>
  config.publicUrl.startsWith('https:') || req?.secure === true;

export function setSessionCookie(res: Response, config: HeraldConfig, token: string): void {
  // No Max-Age: the server decides when a session ends; the browser forgets it when closed.
  res.cookie(SESSION_COOKIE, token, { httpOnly: true, secure: isHttps(config, res.req), sameSite: 'strict', path: '/settings' });
}

export function clearSessionCookie(res: Response, config: HeraldConfig): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, secure: isHttps(config, res.req), sameSite: 'strict', path: '/settings' });
}

export function cookie(req: PageRequest, name: string): string | undefined {
  const value: unknown = req.cookies?.[name];
  return typeof value === 'string' ? value : undefined;
}

export function requirePage(req: PageRequest): PageSession {
  if (!req.page) throw new Error('the settings session guard did not run on this route');
  return req.page;
}

/**
 * Who is logging in, for the wrong-key slow-down: Express's req.ip, which is the socket's peer
 * unless TRUST_PROXY names that peer as a proxy (then the client it forwarded for).
 */
export function clientAddress(req: Request): string {
  return (req.ip ?? req.socket.remoteAddress ?? 'unknown').slice(0, 100);
}

/**
 * Refuses (CsrfRefused) a form the browser says came from another site: see same-origin.ts. Our
 * origins: PUBLIC_URL's, and the one this request was addressed to (Host, and the scheme as
 * TRUST_PROXY lets Express read it).
 */
export function refuseCrossSite(req: Request, config: Pick<HeraldConfig, 'publicUrl'>): void {
  const header = (name: string) => {
    const v = req.headers[name];
    return typeof v === 'string' ? v : undefined;
  };
  const own = [originOf(config.publicUrl), originOf(`${req.protocol}://${req.get('host') ?? ''}`)].filter((o): o is string => o !== null);
  if (crossSiteProblem({ origin: header('origin'), secFetchSite: header('sec-fetch-site') }, own) !== null) throw new CsrfRefused();
}
