import { DynamicModule, INestApplicationContext, Module, Type, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { Logger, LoggerModule } from 'nestjs-pino';
import type { AuthContext } from '../../src/access/auth-context';
import { CoreModule } from '../../src/common/core.module';
import { DomainError, httpStatusFor } from '../../src/common/errors';
import { loggerParams } from '../../src/common/logging';
import { createValidationPipe } from '../../src/common/validation';
import type { HeraldConfig } from '../../src/config/config';
import { DatabaseModule } from '../../src/database/database.module';
import { MetricsModule } from '../../src/metrics/metrics.module';
import { ApiKeysService } from '../../src/workspaces/api-keys.service';
import { WorkspacesModule } from '../../src/workspaces/workspaces.module';
import { createTestDatabase, withClient } from './database';
import { testConfig } from './config';

/**
 * Medium tests: a service (or a few) with its real repositories on a real PostgreSQL, without
 * the application around it, as Immich's server tests its services
 * (`newMediumService(TagService, { real: [TagRepository] })`). What it saves is the app's
 * wiring: every module started, the OpenAPI document built and read back for the contract
 * checks, the HTTP server. Measured here (2026-12-06, database clone included): a context with
 * the engine's modules boots in ~0.2 s where the app takes ~0.4 s (a file's first boot: ~0.8 s
 * against ~1.1 s). testConfig lives in ./config.ts, which loads no application module, so a medium file loads only what it boots.
 *
 * What a medium test gets: a fresh database of its own (a clone of the run's migrated template,
 * ./database.ts), the tests' config (./config.ts testConfig, with the file's overrides), and a Nest
 * application context (`NestFactory.createApplicationContext`) holding the modules the test
 * names plus what every module expects to find: the config and the credentials box (CoreModule),
 * the logger, the database pool (DatabaseModule), the metrics registry, the scheduler's registry
 * and workspaces with their keys (every row belongs to a workspace; a key makes a caller). No
 * HTTP listener, no Swagger document, no page, no global guard, pipe or filter. Lifecycle hooks
 * run as in the app: onModuleInit/onApplicationBootstrap at boot (a worker whose config enables
 * it starts; so do the schedules), and the shutdown hooks when the fixture closes it.
 *
 *   describe('…', () => {
 *     const m = useMedium({ modules: [NotificationsModule], config: mailConfig(smtp.url) });
 *     it('…', async () => {
 *       const ws = await m.workspace('Acme');                      // id, key, auth (its caller)
 *       await m.get(NotificationSettingsService).update(ws.auth, await m.input(UpdateNotificationSettingsDto, { … }));
 *       expect(await m.sql(`SELECT … FROM digests`)).toEqual([…]);
 *     });
 *   });
 *
 * Input goes in as the API would hand it on (`m.input(Dto, body)`: the app's validation pipe,
 * whitelist and transformation included), and callers are the ones the API-key guard would make
 * (`ApiKeysService.authenticate`). Domain errors come back as errors with codes;
 * `answerOf(promise)` gives the status the exception filter would answer for them.
 *
 * When to boot the whole app instead (./app.ts bootTestApp, or the service process,
 * ./process.ts): when what is checked is what only HTTP shows: status codes the filter or the
 * body parser decide, error bodies, headers, cookies, the OpenAPI contract, the guard (keys,
 * throttle, roles on routes), the settings page, or the process itself (start-up, signals, logs).
 */

export type MediumModule = Type<unknown> | DynamicModule;

export interface MediumOptions {
  /** The modules under test (the modules they import come with them). */
  modules: MediumModule[];
  /** Overrides on testConfig; a function is evaluated at boot (for servers started in an earlier hook). */
  config?: Partial<HeraldConfig> | (() => Partial<HeraldConfig>);
}

export interface MediumWorkspace {
  id: string;
  /** its first API key (role owner) */
  key: string;
  /** the key's caller, as the API-key guard resolves it */
  auth: AuthContext;
}

export interface Medium {
  readonly app: INestApplicationContext;
  readonly config: HeraldConfig;
  readonly databaseUrl: string;
  /** The bootstrap (admin) API key of the database, made at boot as `npm start` makes it. */
  readonly adminKey: string;
  /** The bootstrap key's caller (owner of the bootstrap workspace, instance-wide rights). */
  readonly admin: AuthContext;
  /** A provider of the context (any module's, exported or not). */
  get<T>(token: Type<T>): T;
  /** One query on the database. */
  sql<R extends Record<string, unknown>>(text: string, params?: unknown[]): Promise<R[]>;
  /** A new workspace and its first key, made as POST /v1/workspaces makes them (by the bootstrap key). */
  workspace(name?: string): Promise<MediumWorkspace>;
  /**
   * `value` as a controller receives it: validated and transformed to `dto` by the app's validation
   * pipe, as a body (default) or as a query string's parameters (strings, as Express parses them).
   */
  input<T>(dto: Type<T>, value: unknown, as?: 'body' | 'query'): Promise<T>;
  close(): Promise<void>;
}

/** The modules every medium context holds besides the subject's (see the header comment). */
function baseModules(config: HeraldConfig): MediumModule[] {
  return [
    CoreModule.forRoot(config),
    LoggerModule.forRoot(loggerParams(config)),
    DatabaseModule,
    MetricsModule,
    ScheduleModule.forRoot(),
    WorkspacesModule,
  ];
}

/** One medium context, closed by the caller; `databaseUrl` for a second "process" on a database (default: a fresh one). */
export async function bootMedium(options: MediumOptions & { databaseUrl?: string }): Promise<Medium> {
  const databaseUrl = options.databaseUrl ?? (await createTestDatabase()).url;
  const overrides = typeof options.config === 'function' ? options.config() : (options.config ?? {});
  const config = testConfig(databaseUrl, overrides);

  @Module({})
  class MediumRootModule {}
  const root: DynamicModule = { module: MediumRootModule, imports: [...baseModules(config), ...options.modules] };
  const app = await NestFactory.createApplicationContext(root, { bufferLogs: true, abortOnError: false });
  try {
    app.useLogger(app.get(Logger));
    await app.get(ApiKeysService).ensureBootstrapKey(() => undefined);
  } catch (err) {
    await app.close();
    throw err;
  }
  const keys = app.get(ApiKeysService);
  const adminKey = config.bootstrapApiKey ?? '';
  const admin = await keys.authenticate(`Bearer ${adminKey}`);
  const pipe: ValidationPipe = createValidationPipe();

  return {
    app,
    config,
    databaseUrl,
    adminKey,
    admin,
    get: (token) => app.get(token, { strict: false }),
    sql: (text, params = []) => withClient(databaseUrl, async (db) => (await db.query(text, params)).rows),
    async workspace(name = 'Team') {
      const { workspace, apiKey } = await keys.createWorkspace(admin, name);
      return { id: workspace.id, key: apiKey.key, auth: await keys.authenticate(`Bearer ${apiKey.key}`) };
    },
    input: async <T>(dto: Type<T>, value: unknown, as: 'body' | 'query' = 'body') =>
      (await pipe.transform(value, { type: as, metatype: dto })) as T,
    close: () => app.close(),
  };
}

/**
 * Registers the hooks of a medium test file (call it inside `describe`): boots the context before
 * all tests (before each with `each`: a database of its own per test) and closes it after.
 */
export function useMedium(options: MediumOptions & { each?: boolean }): Medium {
  let medium: Medium | null = null;
  const boot = async () => {
    medium = await bootMedium(options);
  };
  const close = async () => {
    const m = medium;
    medium = null;
    await m?.close();
  };
  if (options.each) {
    beforeEach(boot);
    afterEach(close);
  } else {
    beforeAll(boot);
    afterAll(close);
  }
  const current = (): Medium => {
    if (!medium) throw new Error('the medium fixture is used outside a test (its context is booted in beforeAll/beforeEach)');
    return medium;
  };
  return {
    get app() {
      return current().app;
    },
    get config() {
      return current().config;
    },
    get databaseUrl() {
      return current().databaseUrl;
    },
    get adminKey() {
      return current().adminKey;
    },
    get admin() {
      return current().admin;
    },
    get: (token) => current().get(token),
    sql: (text, params) => current().sql(text, params),
    workspace: (name) => current().workspace(name),
    input: (dto, value, as) => current().input(dto, value, as),
    close: () => close(),
  };
}

/** A service call's outcome as the API would answer it (./medium.ts answerOf). */
export interface Answer<T> {
  /** `okStatus` when the call resolved, else the status of its domain error */
  status: number;
  /** what the call resolved to; null when it threw */
  body: T | null;
  /** the domain error's message; null when the call resolved */
  message: string | null;
}

/**
 * A service call's outcome as the API would answer it: `okStatus` (the route's success status,
 * 200 unless given) with the value when it resolved, else the status the exception filter maps
 * its domain error to (src/common/errors.ts httpStatusFor) with the error's message. Any other
 * error is thrown: the API would answer it with a 500.
 */
export async function answerOf<T>(call: Promise<T>, okStatus = 200): Promise<Answer<T>> {
  try {
    return { status: okStatus, body: await call, message: null };
  } catch (err) {
    if (err instanceof DomainError) return { status: httpStatusFor(err.code), body: null, message: err.message };
    throw err;
  }
}
