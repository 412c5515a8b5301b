import { Module } from '@nestjs/common';
import { Connector, CONNECTORS } from './connector.interface';
import { ConnectorRegistry } from './connector.registry';
import { WebhookConnector } from './webhook/webhook.connector';
import { WebhookModule } from './webhook/webhook.module';

/** One module per platform behind one interface; this is the only place that lists them. */
@Module({
  imports: [WebhookModule],
  providers: [
    {
      provide: CONNECTORS,
      inject: [WebhookConnector],
      useFactory: (...connectors: Connector[]) => connectors,
    },
    ConnectorRegistry,
  ],
  exports: [ConnectorRegistry],
})
export class ConnectorsModule {}
