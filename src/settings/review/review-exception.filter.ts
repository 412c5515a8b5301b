import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { toErrorBody } from '../../common/http-exception.filter';
import { PageRenderer } from '../page-renderer';

/** The one answer for an unknown, expired or revoked token, and for a post the link does not show: no hint which. */
export const LINK_NOT_VALID = 'This review link is no longer valid. Ask the person who sent it to you for a new one.';

/**
 * Errors of the review page as its own plain page, never the settings page's (whose header
 * links into /settings): the status and a message for a person, nothing about internals.
 */
@Catch()
export class ReviewExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('ReviewPage');

  constructor(private readonly pages: PageRenderer) {}

  async catch(exception: unknown, host: ArgumentsHost): Promise<void> {
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) return;
    const body = toErrorBody(exception, this.logger);
    // A 404 from anywhere (a post deleted meanwhile) reads like any unusable link.
    const message =
      body.statusCode === 404
        ? LINK_NOT_VALID
        : body.statusCode >= 500
          ? 'Something went wrong on our side. Try again in a moment.'
          : body.message;
    try {
      await this.pages.render(
        res,
        'review-problem',
        { title: body.error, section: null, session: null, status: body.statusCode },
        { layout: 'review-layout', heading: body.error, message },
      );
    } catch {
      if (!res.headersSent) res.status(body.statusCode).type('text/plain').send(message);
    }
  }
}
