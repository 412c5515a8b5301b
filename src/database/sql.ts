import type { DataSource } from 'typeorm';

/** Anything that runs SQL: a DataSource, an EntityManager or a QueryRunner. */
export interface SqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/**
 * Runs SQL and returns its rows. TypeORM's postgres driver answers UPDATE and DELETE with
 * `[rows, rowCount]` instead of the rows (INSERT and SELECT answer the rows): this makes
 * `… RETURNING` read the same whatever the command.
 */
export async function sql<T>(runner: SqlRunner, text: string, parameters: unknown[] = []): Promise<T[]> {
  const result = await runner.query(text, parameters);
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as T[];
  }
  return result as T[];
}

interface PgPool {
  query<R>(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
}

/**
 * Runs a hot-path statement as a named prepared statement on the pool under TypeORM: parsed
 * and planned once per connection instead of on every call, and without the ORM's per-query
 * QueryRunner. For the few statements every API request runs (key lookup, post intake).
 * Not for statements inside a TypeORM transaction (it takes its own pooled connection).
 */
export async function prepared<T>(db: DataSource, name: string, text: string, values: unknown[]): Promise<T[]> {
  const pool = (db.driver as unknown as { master: PgPool }).master;
  const { rows } = await pool.query<T>({ name, text, values });
  return rows;
}
