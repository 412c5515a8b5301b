import { DynamicModule, Global, Module } from '@nestjs/common';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { SecretBox } from './crypto/secret-box';

/** The resolved configuration and the credentials box, available everywhere. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: HeraldConfig): DynamicModule {
    return {
      module: CoreModule,
      providers: [
        { provide: HERALD_CONFIG, useValue: config },
        { provide: SecretBox, useFactory: () => new SecretBox(config.secretKey) },
      ],
      exports: [HERALD_CONFIG, SecretBox],
    };
  }
}
