/**
 * The fair second reference of the bench's `writes` section: what a user of graphile-worker
 * writes to keep a delivery history. graphile-worker deletes a job once it completes; a user who
 * must show what was sent, when, and what the receiver answered keeps an attempt row per attempt.
 * The row and its indexes are Herald's `attempts` (migrations/1764470000000-publish-engine.ts,
 * the BRIN of 1764530000000-notifications.ts), keyed by graphile-worker's job id (bigint; no
 * foreign key: the job row is deleted), so the tax of history itself is measured, not a
 * difference of table shapes.
 */
/** The history table a graphile-worker user would keep: Herald's `attempts` row, keyed by graphile's job id. */
export const HISTORY_TABLE_SQL = `CREATE TABLE delivery_attempts (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id            bigint NOT NULL,
  number            integer NOT NULL CHECK (number > 0),
  started_at        timestamptz NOT NULL,
  finished_at       timestamptz NOT NULL,
  http_status       integer,
  network_error     text,
  error_class       text NOT NULL CHECK (error_class IN ('success', 'transient', 'auth', 'permanent', 'poison')),
  decision          text NOT NULL CHECK (decision IN ('succeed', 'retry', 'dead', 'pause')),
  retry_at          timestamptz,
  latency_ms        integer NOT NULL,
  response_excerpt  text,
  message           text,
  warnings          text,
  idempotency_key   text NOT NULL,
  worker            text NOT NULL,
  UNIQUE (job_id, number)
);
CREATE INDEX delivery_attempts_finished_brin ON delivery_attempts USING brin (finished_at)`;

export const HISTORY_INSERT = `INSERT INTO delivery_attempts (job_id, number, started_at, finished_at, http_status, error_class, decision,
                                                   latency_ms, response_excerpt, idempotency_key, worker)
                        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`;
