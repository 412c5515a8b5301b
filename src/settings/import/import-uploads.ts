import { Injectable } from '@nestjs/common';
import { SessionsService } from '../../people/sessions.service';
import { SessionUploadsMiddleware } from '../compose/compose-uploads';
import { FILE_TOO_LARGE, MAX_IMPORT_BYTES } from './csv-import';

/**
 * The import's two multipart forms (the upload, and "Create N posts", which carries the file back
 * base64-encoded in a field), parsed before the page's session guard reads their CSRF field:
 * one file up to MAX_IMPORT_BYTES, a field up to the base64 of that. Only for a live session
 * whose role may write posts (as ComposeUploadsMiddleware). A file over the limit is not an error
 * page: the import says it is too large (`uploadProblem`).
 */
@Injectable()
export class ImportUploadsMiddleware extends SessionUploadsMiddleware {
  constructor(sessions: SessionsService) {
    super(
      sessions,
      { fileSize: MAX_IMPORT_BYTES, files: 1, fields: 10, fieldSize: Math.ceil((MAX_IMPORT_BYTES * 4) / 3) + 1024, parts: 12 },
      FILE_TOO_LARGE,
    );
  }
}
