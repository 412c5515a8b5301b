import { Module } from '@nestjs/common';
import { BlueskyConnector } from './bluesky/bluesky.connector';
import { BlueskyModule } from './bluesky/bluesky.module';
import { BlueskyOAuthConnect } from './bluesky/oauth/bluesky-oauth-connect';
import { Connector, CONNECTORS } from './connector.interface';
import { ConnectorRegistry } from './connector.registry';
import { LinkedInConnector } from './linkedin/linkedin.connector';
import { LinkedInModule } from './linkedin/linkedin.module';
import { LinkedInOAuthConnect } from './linkedin/oauth/linkedin-oauth-connect';
import { MastodonConnector } from './mastodon/mastodon.connector';
import { MastodonModule } from './mastodon/mastodon.module';
import { MastodonOAuthConnect } from './mastodon/oauth/mastodon-oauth-connect';
import { OAUTH_CONNECTS, OAuthConnect } from './oauth-connect.interface';
import { OAuthConnectRegistry } from './oauth-connect.registry';
import { WebhookConnector } from './webhook/webhook.connector';
import { WebhookModule } from './webhook/webhook.module';

/** One module per platform behind one interface; this is the only place that lists them. */
@Module({
  imports: [BlueskyModule, LinkedInModule, MastodonModule, WebhookModule],
  providers: [
    {
      provide: CONNECTORS,
      inject: [BlueskyConnector, LinkedInConnector, MastodonConnector, WebhookConnector],
      useFactory: (...connectors: Connector[]) => connectors,
    },
    ConnectorRegistry,
    // The platforms an account can be connected to with OAuth ("Connect with …" on the page).
    {
      provide: OAUTH_CONNECTS,
      inject: [BlueskyOAuthConnect, LinkedInOAuthConnect, MastodonOAuthConnect],
      useFactory: (...platforms: OAuthConnect[]) => platforms,
    },
    OAuthConnectRegistry,
  ],
  exports: [ConnectorRegistry, OAuthConnectRegistry],
})
export class ConnectorsModule {}
