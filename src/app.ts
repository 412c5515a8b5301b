import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { json as jsonParser } from 'express';
import type { NestExpressApplication, NestExpressBodyParserOptionsFor } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { mapBodyParserError } from './common/http-exception.filter';
import { answerClientErrors, refuseDeepJson } from './common/request-limits';
import { createOpenApiDocument } from './common/openapi';
import { documentPermissions } from './access/access-openapi';
import { createValidationPipe } from './common/validation';
import { BATCH_BODY_LIMIT_MB, BATCH_PATH } from './posts/posts-batch.controller';
import type { HeraldConfig } from './config/config';
import { ApiKeysService } from './workspaces/api-keys.service';

export const JSON_BODY_LIMIT = '1mb';

/**
 * Builds the whole application (API, workers, scheduler, page) for a resolved config.
 * Used by main.ts and by the end-to-end tests, so both run exactly the same wiring.
 */
export async function createApp(config: HeraldConfig, options: { print?: (text: string) => void } = {}): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bodyParser: false,
    bufferLogs: true,
  });
  app.useLogger(app.get(Logger));
  app.disable('x-powered-by');
  // TRUST_PROXY (docs/operations-security.md): off unless the operator names the proxies.
  app.set('trust proxy', config.trustProxy);
  // Nest 12 leaves `verify` out of these options' type (its rawBody option sets one); without
  // rawBody it hands the options to express.json as they are, so the depth check still runs.
  const json = { limit: JSON_BODY_LIMIT, verify: refuseDeepJson } as NestExpressBodyParserOptionsFor<'json'>;
  // POST /v1/posts/batch carries up to 100 posts: its own, larger limit (docs/api.md "Bulk"),
  // parsed before the general parser, which then leaves the parsed body alone.
  app.use(BATCH_PATH, jsonParser({ limit: `${BATCH_BODY_LIMIT_MB}mb`, verify: refuseDeepJson }));
  app.useBodyParser('json', json);
  app.useBodyParser('urlencoded', { limit: JSON_BODY_LIMIT, extended: false });
  app.use(mapBodyParserError);
  answerClientErrors(app.getHttpServer());
  app.useGlobalPipes(createValidationPipe());

  // The document is served at /docs (page) and /docs-json; the tests check every answer against it.
  // It is built at the first request for it, not at start: building it reads every controller's
  // metadata (~0.4 s of CPU), which a service that nobody asks for its document never needs.
  SwaggerModule.setup('docs', app, () => documentPermissions(createOpenApiDocument(app, config.publicUrl)));

  await app.init();
  await app.get(ApiKeysService).ensureBootstrapKey(options.print ?? ((text) => process.stdout.write(text)));
  return app;
}
