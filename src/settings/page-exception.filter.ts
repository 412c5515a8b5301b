import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { toErrorBody } from '../common/http-exception.filter';
import { PageRenderer } from './page-renderer';
import { CsrfRefused, LoginRequired, RoleRefused } from './session/page-errors';
import type { PageRequest } from './session/page-request';

/**
 * Errors of the settings page as pages, not JSON: no session → the login (coming back here
 * afterwards); a refused form → 403 that says nothing was changed; anything else → the API's
 * own status and message (written for a person), or a 500 that says nothing about internals.
 */
@Catch()
export class PageExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('SettingsPage');

  constructor(private readonly pages: PageRenderer) {}

  async catch(exception: unknown, host: ArgumentsHost): Promise<void> {
    const http = host.switchToHttp();
    const res = http.getResponse<Response>();
    const req = http.getRequest<PageRequest>();
    if (res.headersSent) return;
    if (exception instanceof LoginRequired) {
      const next = exception.next ? `?next=${encodeURIComponent(exception.next)}` : '?expired=1';
      res.redirect(303, `/settings/login${next}`);
      return;
    }
    const body =
      exception instanceof CsrfRefused || exception instanceof RoleRefused
        ? { statusCode: 403, error: 'Forbidden', message: exception.message }
        : toErrorBody(exception, this.logger);
    try {
      await this.pages.render(
        res,
        'error',
        { title: body.error, section: null, session: req.page ?? null, status: body.statusCode },
        { statusCode: body.statusCode, error: body.error, message: body.message },
      );
    } catch (err) {
      this.logger.error(`rendering the error page failed: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) res.status(body.statusCode).type('text/plain').send(body.message);
    }
  }
}
