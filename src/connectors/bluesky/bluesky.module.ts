import { Module } from '@nestjs/common';
import { BlueskyConnector } from './bluesky.connector';
import { BlueskyOAuthConnect } from './oauth/bluesky-oauth-connect';
import { BlueskyOAuthMetadataController } from './oauth/bluesky-oauth-metadata.controller';
import { BlueskyOAuthRepository } from './oauth/bluesky-oauth.repository';
import { BlueskyOAuth } from './oauth/bluesky-oauth.service';

/**
 * Bluesky: the connector, and its OAuth client (its key, stores and tables), whose metadata and
 * keys it serves to authorization servers. "Connect with Bluesky" runs through BlueskyOAuthConnect
 * (accounts/connect/ drives it). Needs HERALD_CONFIG and SecretBox, which CoreModule provides globally.
 */
@Module({
  controllers: [BlueskyOAuthMetadataController],
  providers: [BlueskyConnector, BlueskyOAuth, BlueskyOAuthRepository, BlueskyOAuthConnect],
  exports: [BlueskyConnector, BlueskyOAuth, BlueskyOAuthConnect],
})
export class BlueskyModule {}
