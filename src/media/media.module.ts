import { Module } from '@nestjs/common';
import { MediaRepository } from './media.repository';

/** Uploaded images: storage, the upload API and the signed URLs that serve them. */
@Module({
  providers: [MediaRepository],
  exports: [MediaRepository],
})
export class MediaModule {}
