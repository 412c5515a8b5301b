import { Module } from '@nestjs/common';
import { LinkedInVersionWatch } from './linkedin-version-watch';
import { LinkedInConnector } from './linkedin.connector';
import { LinkedInOAuthClient } from './oauth/linkedin-oauth.client';
import { LinkedInOAuthConnect } from './oauth/linkedin-oauth-connect';

/** LinkedIn: the connector, and its side of "Connect with LinkedIn". Needs HERALD_CONFIG, which CoreModule provides globally. */
@Module({
  providers: [LinkedInConnector, LinkedInVersionWatch, LinkedInOAuthClient, LinkedInOAuthConnect],
  exports: [LinkedInConnector, LinkedInOAuthConnect],
})
export class LinkedInModule {}
