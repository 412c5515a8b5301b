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
