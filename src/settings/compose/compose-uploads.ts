import { Injectable, NestMiddleware } from '@nestjs/common';
import cookieParser from 'cookie-parser';
import type { NextFunction, Request, Response } from 'express';
import { allows } from '../../access/roles';
import { MAX_MEDIA_BYTES } from '../../media/media.types';
import { cookie, PageRequest, SESSION_COOKIE } from '../session/page-request';
import { SessionsService } from '../../people/sessions.service';

/**
 * multer is the multipart parser of @nestjs/platform-express (the API's media upload uses it
 * through FileInterceptor); it has no type declarations, so what is used of it is described here.
 */
type Middleware = (req: Request, res: Response, done: (err?: unknown) => void) => void;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const multer = require('multer') as {
  (options: { storage: unknown; limits: Record<string, number> }): { single(field: string): Middleware };
  memoryStorage(): unknown;
};

/**
 * A page's multipart form, parsed before the page's session guard (which reads its CSRF field):
 * multer, memory storage, one file and the text fields, within the limits a subclass gives. Only
 * for a live session whose role may write posts: anyone else's body is not read at all (the guard
 * then refuses the request: no session, or no CSRF field). A form multer cannot read is not an
 * error page: the form shows why (`uploadProblem`; `tooLarge` for a file over the limit).
 */
export abstract class SessionUploadsMiddleware implements NestMiddleware {
  private readonly parse: Middleware;
  private readonly cookies = cookieParser();

  protected constructor(
    private readonly sessions: SessionsService,
    limits: Record<string, number>,
    private readonly tooLarge: string,
  ) {
    this.parse = multer({ storage: multer.memoryStorage(), limits }).single('file');
  }

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    // The page's cookie parser may not have run yet (middleware order): read them here too.
    if ((req as PageRequest).cookies === undefined) await new Promise<void>((resolve) => this.cookies(req, res, () => resolve()));
    let mayWrite: boolean;
    try {
      const session = await this.sessions.resolve(cookie(req as PageRequest, SESSION_COOKIE));
      mayWrite = session !== null && allows(session.auth, 'edit');
    } catch {
      // The guard meets the same failure and answers for it.
      mayWrite = false;
    }
    if (!mayWrite) {
      next();
      return;
    }
    this.parse(req, res, (err: unknown) => {
      if (err) {
        const code = (err as { code?: unknown }).code;
        (req as Request & { uploadProblem?: string }).uploadProblem =
          code === 'LIMIT_FILE_SIZE'
            ? this.tooLarge
            : `the form could not be read (${err instanceof Error ? err.message : 'unknown error'})`;
        req.body ??= {};
      }
      next();
    });
  }
}

/**
 * The composer's multipart form: one image up to the API's 5 MB and the text fields. An image over
 * the limit is not an error page: the composer shows why the image was not added.
 */
@Injectable()
export class ComposeUploadsMiddleware extends SessionUploadsMiddleware {
  constructor(sessions: SessionsService) {
    super(
      sessions,
      { fileSize: MAX_MEDIA_BYTES, files: 1, fields: 200, fieldSize: 64 * 1024, parts: 210 },
      'it is larger than the 5 MB limit',
    );
  }
}
