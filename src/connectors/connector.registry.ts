import { Inject, Injectable } from '@nestjs/common';
import { invalidInput } from '../common/errors';
import { Connector, CONNECTORS, Provider } from './connector.interface';

/** Picks the connector for a provider name. The list is assembled in connectors.module.ts. */
@Injectable()
export class ConnectorRegistry {
  private readonly byProvider: Map<Provider, Connector>;

  constructor(@Inject(CONNECTORS) connectors: Connector[]) {
    this.byProvider = new Map(connectors.map((c) => [c.provider, c]));
  }

  find(provider: Provider): Connector | undefined {
    return this.byProvider.get(provider);
  }

  /** The connector, or a 400 that says the provider is not available here. */
  require(provider: Provider): Connector {
    const connector = this.byProvider.get(provider);
    if (!connector) {
      const available = [...this.byProvider.keys()].join(', ');
      throw invalidInput(`provider "${provider}" is not available in this version of Herald (available: ${available})`);
    }
    return connector;
  }
}
