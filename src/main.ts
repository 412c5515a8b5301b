import 'reflect-metadata';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { createApp } from './app';
import { chooseLogFormat } from './common/logging';
import { loadOrCreateSecretKey } from './common/crypto/secret-key-file';
import { ConfigError, EnvConfig, HeraldConfig, loadConfig } from './config/config';
import { ensureDatabase } from './database/data-source';
import { EmbeddedPostgresHandle, startEmbeddedPostgres } from './database/embedded-postgres';

/** Plain console lines for the few messages printed before the structured logger exists. */
function say(message: string): void {
  process.stderr.write(`[herald] ${message}\n`);
}

async function resolveDatabase(env: EnvConfig): Promise<{ url: string; embedded: EmbeddedPostgresHandle | null }> {
  if (env.databaseUrl) return { url: env.databaseUrl, embedded: null };
  say(
    `DATABASE_URL is not set: starting the embedded PostgreSQL (data in ${path.join(env.dataDir, 'postgres')}, port ${env.embeddedPostgresPort})`,
  );
  const embedded = await startEmbeddedPostgres({
    dataDir: path.join(env.dataDir, 'postgres'),
    port: env.embeddedPostgresPort,
    httpPort: env.port,
    log: say,
  });
  try {
    return { url: await ensureDatabase(embedded.url, 'herald'), embedded };
  } catch (err) {
    await embedded.stop();
    throw err;
  }
}

async function main(): Promise<void> {
  let env: EnvConfig;
  try {
    env = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      say(err.message);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }

  const { url, embedded } = await resolveDatabase(env);
  let stopping = false;
  const stopEmbedded = async () => {
    if (embedded) await embedded.stop().catch((err: unknown) => say(`stopping the embedded PostgreSQL failed: ${String(err)}`));
  };

  try {
    const config: HeraldConfig = {
      ...env,
      databaseUrl: url,
      embedded: embedded !== null,
      logFormat: chooseLogFormat(env.logFormat, process.stdout.isTTY === true),
      secretKey: env.secretKey ?? loadOrCreateSecretKey(env.dataDir, (m) => say(`WARNING: ${m}`)),
    };
    const app = await createApp(config);
    await app.listen(config.port, config.host);
    const address = (app.getHttpServer() as Server).address() as AddressInfo | null;
    // PORT=0 lets the system choose: the folder's ownership record names the port it chose.
    if (embedded && address && address.port !== config.port) embedded.recordHttpPort(address.port);
    say(`Herald is listening on http://localhost:${address?.port ?? config.port} (API /v1, docs /docs, settings /settings)`);

    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      say(`${signal} received: finishing in-flight work, then stopping`);
      // A second signal during shutdown means "now".
      for (const s of ['SIGINT', 'SIGTERM']) process.once(s, () => process.exit(130));
      void (async () => {
        try {
          await app.close();
        } catch (err) {
          say(`shutdown error: ${String(err)}`);
        }
        await stopEmbedded();
        say('stopped');
        process.exit(0);
      })();
    };
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.once('SIGTERM', () => shutdown('SIGTERM'));
  } catch (err) {
    await stopEmbedded();
    throw err;
  }
}

main().catch((err: unknown) => {
  say(`could not start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
