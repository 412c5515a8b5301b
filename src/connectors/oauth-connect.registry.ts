import { Inject, Injectable } from '@nestjs/common';
import { invalidInput } from '../common/errors';
import type { Provider } from './connector.interface';
import { OAUTH_CONNECTS, OAuthConnect } from './oauth-connect.interface';

/** Picks a platform's side of "Connect with …" by provider name. The list is assembled in connectors.module.ts. */
@Injectable()
export class OAuthConnectRegistry {
  private readonly byProvider: Map<Provider, OAuthConnect>;

  constructor(@Inject(OAUTH_CONNECTS) platforms: OAuthConnect[]) {
    this.byProvider = new Map(platforms.map((p) => [p.provider, p]));
  }

  find(provider: Provider): OAuthConnect | undefined {
    return this.byProvider.get(provider);
  }

  /** The platform's flow, or a 400 that says the provider does not connect with OAuth. */
  require(provider: Provider): OAuthConnect {
    const platform = this.byProvider.get(provider);
    if (!platform) throw invalidInput(`${provider} accounts are not connected with OAuth`);
    return platform;
  }
}
