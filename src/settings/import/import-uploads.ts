import { Injectable, NestMiddleware } from '@nestjs/common';
import cookieParser from 'cookie-parser';
import type { NextFunction, Request, Response } from 'express';
import { allows } from '../../access/roles';
import { SessionsService } from '../../people/sessions.service';
import { cookie, PageRequest, SESSION_COOKIE } from '../session/page-request';
import { FILE_TOO_LARGE, MAX_IMPORT_BYTES } from './csv-import';

type Middleware = (req: Request, res: Response, done: (err?: unknown) => void) => void;
// multer (@nestjs/platform-express's multipart parser) has no type declarations: see compose-uploads.ts.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const multer = require('multer') as {
  (options: { storage: unknown; limits: Record<string, number> }): { single(field: string): Middleware };
  memoryStorage(): unknown;
};

/**
 * The import's two multipart forms (the upload, and "Create N posts", which carries the file back
 * base64-encoded in a field), parsed before the page's session guard reads their CSRF field:
 * one file up to MAX_IMPORT_BYTES, a field up to the base64 of that. Only for a live session
 * whose role may write posts (as ComposeUploadsMiddleware). A file over the limit is not an error
 * page: the import says it is too large (`uploadProblem`).
 */
@Injectable()
export class ImportUploadsMiddleware implements NestMiddleware {
  private readonly parse = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: MAX_IMPORT_BYTES, files: 1, fields: 10, fieldSize: Math.ceil((MAX_IMPORT_BYTES * 4) / 3) + 1024, parts: 12 },
  }).single('file');

  private readonly cookies = cookieParser();

  constructor(private readonly sessions: SessionsService) {}

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    if ((req as PageRequest).cookies === undefined) await new Promise<void>((resolve) => this.cookies(req, res, () => resolve()));
    let mayWrite: boolean;
    try {
      const session = await this.sessions.resolve(cookie(req as PageRequest, SESSION_COOKIE));
      mayWrite = session !== null && allows(session.auth, 'edit');
    } catch {
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
            ? FILE_TOO_LARGE
            : `the form could not be read (${err instanceof Error ? err.message : 'unknown error'})`;
        req.body ??= {};
      }
      next();
    });
  }
}
