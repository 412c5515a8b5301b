import { Module } from '@nestjs/common';
import { MastodonConnector } from './mastodon.connector';
import { MastodonApps } from './oauth/mastodon-apps';
import { MastodonAppsRepository } from './oauth/mastodon-apps.repository';
import { MastodonOAuthClient } from './oauth/mastodon-oauth.client';
import { MastodonOAuthConnect } from './oauth/mastodon-oauth-connect';

/**
 * Mastodon: the connector (pasted access tokens, or the ones "Connect with Mastodon" grants), and
 * its side of "Connect with Mastodon" with Herald's app registration per instance (mastodon_apps).
 * Needs HERALD_CONFIG and SecretBox, which CoreModule provides globally.
 */
@Module({
  providers: [MastodonConnector, MastodonOAuthClient, MastodonAppsRepository, MastodonApps, MastodonOAuthConnect],
  exports: [MastodonConnector, MastodonOAuthConnect],
})
export class MastodonModule {}
