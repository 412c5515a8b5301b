import { Module } from '@nestjs/common';
import { WebhookConnector } from './webhook.connector';

/** Blog webhooks. Needs HERALD_CONFIG, which CoreModule provides globally. */
@Module({
  providers: [WebhookConnector],
  exports: [WebhookConnector],
})
export class WebhookModule {}
