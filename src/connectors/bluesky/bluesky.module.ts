import { Module } from '@nestjs/common';
import { BlueskyConnector } from './bluesky.connector';
import { BlueskyOAuthRepository } from './oauth/bluesky-oauth.repository';
import { BlueskyOAuth } from './oauth/bluesky-oauth.service';

/**
 * Bluesky: the connector, and its OAuth client (its key, stores and tables). The settings page
 * serves the client's metadata and keys and runs the connect flow through BlueskyOAuth. Needs HERALD_CONFIG and SecretBox, which
 * CoreModule provides globally.
 */
@Module({
  providers: [BlueskyConnector, BlueskyOAuth, BlueskyOAuthRepository],
  exports: [BlueskyConnector, BlueskyOAuth],
})
export class BlueskyModule {}
