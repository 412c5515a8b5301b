import { Module } from '@nestjs/common';
import { Connector, CONNECTORS } from './connector.interface';
import { ConnectorRegistry } from './connector.registry';
import { LinkedInConnector } from './linkedin/linkedin.connector';
import { LinkedInModule } from './linkedin/linkedin.module';
import { WebhookConnector } from './webhook/webhook.connector';
import { WebhookModule } from './webhook/webhook.module';

/** One module per platform behind one interface; this is the only place that lists them. */
@Module({
  imports: [LinkedInModule, WebhookModule],
  providers: [
    {
      provide: CONNECTORS,
      inject: [LinkedInConnector, WebhookConnector],
      useFactory: (...connectors: Connector[]) => connectors,
    },
    ConnectorRegistry,
  ],
  exports: [ConnectorRegistry],
})
export class ConnectorsModule {}
