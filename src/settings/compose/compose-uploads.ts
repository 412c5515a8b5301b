import type { NextFunction, Request, Response } from 'express';
import { MAX_MEDIA_BYTES } from '../../media/media.types';

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
 * The composer's multipart form, parsed before the page's session guard (which reads its CSRF
 * field): multer, memory storage, one image up to the API's 5 MB and the text fields. A form
 * multer cannot read is not an error page: the composer shows why the image was not added
 * (`uploadProblem`), and the guard refuses it when its CSRF field did not arrive.
 */
export function composeUploads() {
  const parse = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: MAX_MEDIA_BYTES, files: 1, fields: 200, fieldSize: 64 * 1024, parts: 210 },
  }).single('file');
  return (req: Request, res: Response, next: NextFunction): void => {
    parse(req, res, (err: unknown) => {
      if (err) {
        const code = (err as { code?: unknown }).code;
        (req as Request & { uploadProblem?: string }).uploadProblem =
          code === 'LIMIT_FILE_SIZE'
            ? 'it is larger than the 5 MB limit'
            : `the form could not be read (${err instanceof Error ? err.message : 'unknown error'})`;
        req.body ??= {};
      }
      next();
    });
  };
}
