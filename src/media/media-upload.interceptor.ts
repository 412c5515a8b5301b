import { CallHandler, ExecutionContext, HttpException, HttpStatus, Injectable, NestInterceptor } from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import type { Observable } from 'rxjs';
import { DomainError, ErrorCode, invalidInput } from '../common/errors';
import { MAX_ALT_LENGTH, MAX_MEDIA_BYTES } from './media.types';

/** What multer's memory storage leaves on `req.file`. */
export interface UploadedImage {
  fieldname: string;
  originalname: string;
  mimetype: string;
  size: number;
  buffer: Buffer;
}

/**
 * Multer (through Nest's FileInterceptor) with memory storage: one file field `file`, up to
 * 5 MB (multer stops reading past it), and small text fields (`alt`). Multer's own errors are
 * turned into domain errors here, so a too-large image says "5 MB" rather than the JSON
 * body's "1 MB" wording the filter uses for its 413s.
 */
const Multer = FileInterceptor('file', {
  limits: { fileSize: MAX_MEDIA_BYTES, files: 1, fields: 4, fieldSize: MAX_ALT_LENGTH * 4, parts: 6 },
});

@Injectable()
export class MediaUploadInterceptor implements NestInterceptor {
  private readonly multer = new Multer();

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    try {
      return await this.multer.intercept(context, next);
    } catch (err) {
      if (err instanceof HttpException) {
        const status: HttpStatus = err.getStatus();
        if (status === HttpStatus.PAYLOAD_TOO_LARGE) {
          throw new DomainError(ErrorCode.PayloadTooLarge, 'the image is larger than the 5 MB limit');
        }
        throw invalidInput(
          `the upload could not be read: ${err.message} (send multipart/form-data with one "file" field and an optional "alt" field)`,
        );
      }
      throw err;
    }
  }
}
