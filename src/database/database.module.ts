import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { dataSourceOptions, runMigrations } from './data-source';

/** The PostgreSQL connection pool. Migrations run before any other provider can use it. */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [HERALD_CONFIG],
      useFactory: (config: HeraldConfig) => ({
        ...dataSourceOptions(config.databaseUrl, config.databasePoolSize),
        // Fail fast with the real reason instead of TypeORM's default 30 s of retries.
        retryAttempts: 2,
        retryDelay: 1000,
      }),
      dataSourceFactory: async (options) => {
        if (!options) throw new Error('no data source options');
        const dataSource = await new DataSource(options).initialize();
        await runMigrations(dataSource);
        return dataSource;
      },
    }),
  ],
})
export class DatabaseModule {}
