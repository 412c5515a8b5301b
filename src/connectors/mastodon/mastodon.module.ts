import { Module } from '@nestjs/common';
import { MastodonConnector } from './mastodon.connector';

/** Mastodon: the connector (pasted access tokens). Needs HERALD_CONFIG, which CoreModule provides globally. */
@Module({
  providers: [MastodonConnector],
  exports: [MastodonConnector],
})
export class MastodonModule {}
