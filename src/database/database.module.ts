import { Global, Module } from '@nestjs/common';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { migrate } from './data-source';
import { Db } from './db';

/**
 * The database: migrations first (TypeORM, under an advisory lock, on a connection of their
 * own that is closed afterwards), then the one pool every repository uses (db.ts). Global so
 * that every module's repositories can inject `Db`.
 */
@Global()
@Module({
  providers: [
    {
      provide: Db,
      inject: [HERALD_CONFIG],
      useFactory: async (config: HeraldConfig) => {
        // A session advisory lock guards the migrations: it needs a session of its own, so
        // behind a transaction pooler they go to the direct URL.
        await migrate(config.databaseDirectUrl ?? config.databaseUrl);
        return new Db(config);
      },
    },
  ],
  exports: [Db],
})
export class DatabaseModule {}
