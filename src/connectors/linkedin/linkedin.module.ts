import { Module } from '@nestjs/common';
import { LinkedInConnector } from './linkedin.connector';

/** LinkedIn. Needs HERALD_CONFIG, which CoreModule provides globally. */
@Module({
  providers: [LinkedInConnector],
  exports: [LinkedInConnector],
})
export class LinkedInModule {}
