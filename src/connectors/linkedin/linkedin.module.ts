import { Module } from '@nestjs/common';
import { LinkedInVersionWatch } from './linkedin-version-watch';
import { LinkedInConnector } from './linkedin.connector';

/** LinkedIn. Needs HERALD_CONFIG, which CoreModule provides globally. */
@Module({
  providers: [LinkedInConnector, LinkedInVersionWatch],
  exports: [LinkedInConnector],
})
export class LinkedInModule {}
