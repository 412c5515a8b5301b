import { Module } from '@nestjs/common';
import { BlueskyConnector } from './bluesky/bluesky.connector';
import { BlueskyModule } from './bluesky/bluesky.module';
import { Connector, CONNECTORS } from './connector.interface';
import { ConnectorRegistry } from './connector.registry';
import { LinkedInConnector } from './linkedin/linkedin.connector';
import { LinkedInModule } from './linkedin/linkedin.module';
import { WebhookConnector } from './webhook/webhook.connector';
import { WebhookModule } from './webhook/webhook.module';

/** One module per platform behind one interface; this is the only place that lists them. */
@Module({
  imports: [BlueskyModule, LinkedInModule, WebhookModule],
  providers: [
    {
      provide: CONNECTORS,
      inject: [BlueskyConnector, LinkedInConnector, WebhookConnector],
      useFactory: (...connectors: Connector[]) => connectors,
    },
    ConnectorRegistry,
  ],
  exports: [ConnectorRegistry],
})
export class ConnectorsModule {}
