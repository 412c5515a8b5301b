import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { CsrfRefused, LoginRequired } from './page-errors';
import { cookie, PageRequest, SESSION_COOKIE } from './page-request';
import { sameSecret, SessionsService } from './sessions.service';

/**
 * Every page but the login needs a session; every form needs the session's CSRF token.
 * The session cookie is SameSite=Strict, so a form posted from another site arrives without it
 * (and is sent to the login); the token also refuses a post that carries the cookie but did not
 * come from one of our pages.
 */
@Injectable()
export class PageSessionGuard implements CanActivate {
  constructor(private readonly sessions: SessionsService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<PageRequest>();
    const session = await this.sessions.resolve(cookie(req, SESSION_COOKIE));
    const reading = req.method === 'GET' || req.method === 'HEAD';
    if (!session) throw new LoginRequired(reading ? req.originalUrl : null);
    if (!reading) {
      const body = req.body as Record<string, unknown> | undefined;
      const token = typeof body?._csrf === 'string' ? body._csrf : '';
      if (!sameSecret(token, session.csrfToken)) throw new CsrfRefused();
    }
    req.page = session;
    return true;
  }
}
