import { Module } from '@nestjs/common';
import { BlueskyConnector } from './bluesky.connector';
import { BlueskyOAuthController } from './oauth/bluesky-oauth.controller';
import { BlueskyOAuthRepository } from './oauth/bluesky-oauth.repository';
import { BlueskyOAuth } from './oauth/bluesky-oauth.service';

/**
 * Bluesky: the connector, and its OAuth client (the metadata and keys it serves, its tables).
 * The settings page's connect flow uses BlueskyOAuth. Needs HERALD_CONFIG and SecretBox, which
 * CoreModule provides globally.
 */
@Module({
  controllers: [BlueskyOAuthController],
  providers: [BlueskyConnector, BlueskyOAuth, BlueskyOAuthRepository],
  exports: [BlueskyConnector, BlueskyOAuth],
})
export class BlueskyModule {}
