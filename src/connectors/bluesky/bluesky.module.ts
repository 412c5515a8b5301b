import { Module } from '@nestjs/common';
import { BlueskyConnector } from './bluesky.connector';

/** Bluesky. Needs HERALD_CONFIG, which CoreModule provides globally. */
@Module({
  providers: [BlueskyConnector],
  exports: [BlueskyConnector],
})
export class BlueskyModule {}
