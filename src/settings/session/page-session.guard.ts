import { CanActivate, ExecutionContext, Inject, Injectable, Logger } from '@nestjs/common';
import { HERALD_CONFIG, HeraldConfig } from '../../config/config';
import { permissionFor } from '../../access/route-permissions';
import { allows, whoMay } from '../../access/roles';
import { CsrfRefused, LoginRequired, RoleRefused } from './page-errors';
import { cookie, PageRequest, refuseCrossSite, SESSION_COOKIE } from './page-request';
import { SessionsService } from '../../people/sessions.service';
import { sameSecret } from './same-secret';

/**
 * Every page but the login needs a session; every form needs the session's CSRF token; and the
 * session's role must allow the route (src/access/route-permissions.ts, the table the API's
 * guard reads too; a route missing from it is refused).
 * The session cookie is SameSite=Strict, so a form posted from another site arrives without it
 * (and is sent to the login); the token also refuses a post that carries the cookie but did not
 * come from one of our pages; and a post whose Origin or Sec-Fetch-Site says another site is
 * refused even with a valid token (same-origin.ts).
 */
@Injectable()
export class PageSessionGuard implements CanActivate {
  private readonly logger = new Logger('PageSessionGuard');

  constructor(
    private readonly sessions: SessionsService,
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<PageRequest>();
    const session = await this.sessions.resolve(cookie(req, SESSION_COOKIE));
    const reading = req.method === 'GET' || req.method === 'HEAD';
    if (!session) throw new LoginRequired(reading ? req.originalUrl : null);
    if (!reading) {
      // A second line behind the token: a form the browser says came from another site.
      refuseCrossSite(req, this.config);
      const body = req.body as Record<string, unknown> | undefined;
      const token = typeof body?._csrf === 'string' ? body._csrf : '';
      if (!sameSecret(token, session.csrfToken)) throw new CsrfRefused();
    }
    req.page = session;
    const route = (req.route as { path?: unknown } | undefined)?.path;
    const permission = typeof route === 'string' ? permissionFor(req.method, route) : undefined;
    if (!permission) {
      this.logger.error(`${req.method} ${String(route)} has no entry in src/access/route-permissions.ts: refused`);
      throw new RoleRefused('nobody yet (this page has no entry in the role table)', session.auth.role);
    }
    if (!allows(session.auth, permission)) throw new RoleRefused(whoMay(permission), session.auth.role);
    return true;
  }
}
