import { Module } from '@nestjs/common';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { JobsModule } from '../jobs/jobs.module';
import { MediaController, PublicMediaController } from './media.controller';
import { MediaRepository } from './media.repository';
import { MediaResolver } from './media-resolver';
import { MediaService } from './media.service';
import { MediaUrlSigner } from './media-url';
import { MediaUploadInterceptor } from './media-upload.interceptor';

/** Uploaded images: storage, the upload API, the signed links that serve them, and their resolution for the worker. */
@Module({
  imports: [JobsModule],
  controllers: [MediaController, PublicMediaController],
  providers: [
    MediaRepository,
    MediaService,
    MediaResolver,
    MediaUploadInterceptor,
    {
      provide: MediaUrlSigner,
      inject: [HERALD_CONFIG],
      useFactory: (config: HeraldConfig) => new MediaUrlSigner(config.secretKey, config.publicUrl, config.media.urlTtlSeconds),
    },
  ],
  exports: [MediaService, MediaResolver],
})
export class MediaModule {}
