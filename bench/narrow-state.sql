-- The narrow-state design of docs/benchmarks.md ("Writes per delivery"), measured before it is
-- built: the round's writes for 20,000 webhook deliveries (claim 100 at a time, then record them
-- with their attempt rows), once on today's layout (a copy of `jobs` and `attempts`, indexes and
-- checks included) and once with the changing state in a narrow table of its own (`job_state`,
-- with the partial indexes) beside the wide row written once (`jobs_b`). Prints the WAL bytes per
-- delivery of each and the LSN ranges for `pg_waldump`.
--
-- Run on a database Herald has migrated (it reads the shape of `jobs` and `attempts`; it writes
-- only sim_* tables, dropped at the end), on a server where nothing else writes WAL meanwhile:
--   psql "$DATABASE_URL" -f bench/narrow-state.sql
-- A simulation of the statements' shape, not Herald's statements: read the two figures side by side.
\set ON_ERROR_STOP 1
DROP TABLE IF EXISTS sim_attempts_a, sim_attempts_b, sim_state, sim_jobs_b, sim_jobs_a, sim_src;
CREATE TABLE sim_jobs_a (LIKE jobs INCLUDING ALL);
CREATE TABLE sim_attempts_a (LIKE attempts INCLUDING ALL);
ALTER TABLE sim_attempts_a ADD FOREIGN KEY (job_id) REFERENCES sim_jobs_a(id);
-- B: the wide row written once, the changing state in a narrow table of its own.
CREATE TABLE sim_jobs_b (LIKE jobs INCLUDING DEFAULTS);
ALTER TABLE sim_jobs_b DROP COLUMN status, DROP COLUMN run_at, DROP COLUMN publish_by, DROP COLUMN attempt_count, DROP COLUMN lease_owner,
  DROP COLUMN lease_expires_at, DROP COLUMN updated_at, DROP COLUMN finished_at, DROP COLUMN error_class, DROP COLUMN last_error,
  DROP COLUMN last_http_status, DROP COLUMN last_network_error, DROP COLUMN dead_reason, DROP COLUMN remote_id, DROP COLUMN remote_url, DROP COLUMN parts;
ALTER TABLE sim_jobs_b ADD PRIMARY KEY (id), ADD UNIQUE (post_id, account_id);
CREATE TABLE sim_state (
  job_id uuid PRIMARY KEY REFERENCES sim_jobs_b(id), account_id uuid NOT NULL, workspace_id uuid NOT NULL, status text NOT NULL,
  run_at timestamptz NOT NULL, publish_by timestamptz, attempt_count int NOT NULL DEFAULT 0, lease_owner text, lease_expires_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz, error_class text, last_error text, last_http_status int,
  last_network_error text, dead_reason text, remote_id text, remote_url text, parts jsonb NOT NULL DEFAULT '[]');
CREATE INDEX sim_s_ready ON sim_state (run_at) WHERE status = 'scheduled';
CREATE INDEX sim_s_ready_account ON sim_state (account_id, run_at) WHERE status = 'scheduled';
CREATE INDEX sim_s_in_progress ON sim_state (account_id, lease_expires_at) WHERE status = 'in_progress';
CREATE INDEX sim_s_paused ON sim_state (account_id) WHERE status = 'paused';
CREATE INDEX sim_s_publish_by ON sim_state (publish_by) WHERE status IN ('scheduled', 'paused') AND publish_by IS NOT NULL;
CREATE INDEX sim_s_dlq ON sim_state (workspace_id, finished_at DESC, job_id DESC) WHERE status IN ('dead', 'discarded');
CREATE TABLE sim_attempts_b (LIKE attempts INCLUDING ALL);
ALTER TABLE sim_attempts_b ADD FOREIGN KEY (job_id) REFERENCES sim_state(job_id);

-- 20,000 jobs over 20 accounts, as the bench makes them (a webhook post each).
CREATE TABLE sim_src AS
SELECT gen_random_uuid() AS id, '00000000-0000-4000-8000-000000000001'::uuid AS ws, gen_random_uuid() AS post,
       ('00000000-0000-4000-8000-0000000000' || lpad((g % 20)::text, 2, '0'))::uuid AS acc, g
FROM generate_series(1, 20000) g;
INSERT INTO sim_jobs_a (id, workspace_id, post_id, account_id, provider, status, run_at, idempotency_key, payload)
SELECT id, ws, post, acc, 'webhook', 'scheduled', now() - interval '1 minute' + g * interval '1 ms', id::text,
       jsonb_build_object('text', 'bench post ' || g, 'title', null, 'link', null, 'media', '[]'::jsonb) FROM sim_src;
INSERT INTO sim_jobs_b (id, workspace_id, post_id, account_id, provider, attempt_base, idempotency_key, payload)
SELECT id, ws, post, acc, 'webhook', 0, id::text, jsonb_build_object('text', 'bench post ' || g, 'title', null, 'link', null, 'media', '[]'::jsonb) FROM sim_src;
INSERT INTO sim_state (job_id, account_id, workspace_id, status, run_at) SELECT id, acc, ws, 'scheduled', now() - interval '1 minute' + g * interval '1 ms' FROM sim_src;
SELECT avg(pg_column_size(j.*))::int AS a_row, (SELECT avg(pg_column_size(s.*))::int FROM sim_state s) AS b_state_row FROM sim_jobs_a j;

CREATE OR REPLACE PROCEDURE sim_run_a() LANGUAGE plpgsql AS $$
DECLARE n int;
BEGIN
  LOOP
    WITH c AS (SELECT id FROM sim_jobs_a WHERE status = 'scheduled' ORDER BY account_id, run_at LIMIT 100 FOR UPDATE SKIP LOCKED)
    UPDATE sim_jobs_a j SET status = 'in_progress', lease_owner = 'worker-1', lease_expires_at = now() + interval '1 minute',
      attempt_count = j.attempt_count + 1, updated_at = now() FROM c WHERE j.id = c.id;
    GET DIAGNOSTICS n = ROW_COUNT;
    COMMIT;
    EXIT WHEN n = 0;
    WITH done AS (
      UPDATE sim_jobs_a j SET status = 'succeeded', lease_owner = NULL, lease_expires_at = NULL, finished_at = now(), error_class = 'success',
        last_http_status = 200, remote_id = 'r-' || left(j.id::text, 8), remote_url = NULL, updated_at = now()
      WHERE j.status = 'in_progress' RETURNING j.id, j.attempt_count, j.idempotency_key)
    INSERT INTO sim_attempts_a (job_id, number, started_at, finished_at, http_status, error_class, decision, latency_ms, response_excerpt, idempotency_key, worker)
    SELECT id, attempt_count, now(), now(), 200, 'success', 'succeed', 3, '{"id":"ok"}', idempotency_key, 'worker-1' FROM done;
    COMMIT;
  END LOOP;
END $$;
CREATE OR REPLACE PROCEDURE sim_run_b() LANGUAGE plpgsql AS $$
DECLARE n int;
BEGIN
  LOOP
    WITH c AS (SELECT job_id FROM sim_state WHERE status = 'scheduled' ORDER BY account_id, run_at LIMIT 100 FOR UPDATE SKIP LOCKED)
    UPDATE sim_state s SET status = 'in_progress', lease_owner = 'worker-1', lease_expires_at = now() + interval '1 minute',
      attempt_count = s.attempt_count + 1, updated_at = now() FROM c WHERE s.job_id = c.job_id;
    GET DIAGNOSTICS n = ROW_COUNT;
    COMMIT;
    EXIT WHEN n = 0;
    WITH done AS (
      UPDATE sim_state s SET status = 'succeeded', lease_owner = NULL, lease_expires_at = NULL, finished_at = now(), error_class = 'success',
        last_http_status = 200, remote_id = 'r-' || left(s.job_id::text, 8), remote_url = NULL, updated_at = now()
      WHERE s.status = 'in_progress' RETURNING s.job_id, s.attempt_count)
    INSERT INTO sim_attempts_b (job_id, number, started_at, finished_at, http_status, error_class, decision, latency_ms, response_excerpt, idempotency_key, worker)
    SELECT d.job_id, d.attempt_count, now(), now(), 200, 'success', 'succeed', 3, '{"id":"ok"}', w.idempotency_key, 'worker-1'
    FROM done d JOIN sim_jobs_b w ON w.id = d.job_id;
    COMMIT;
  END LOOP;
END $$;
VACUUM ANALYZE sim_jobs_a, sim_jobs_b, sim_state, sim_attempts_a, sim_attempts_b; ALTER TABLE sim_jobs_a SET (autovacuum_enabled = false); ALTER TABLE sim_state SET (autovacuum_enabled = false); ALTER TABLE sim_jobs_b SET (autovacuum_enabled = false); ALTER TABLE sim_attempts_a SET (autovacuum_enabled = false); ALTER TABLE sim_attempts_b SET (autovacuum_enabled = false);
CHECKPOINT;
SELECT pg_current_wal_lsn() AS a0 \gset
CALL sim_run_a();
SELECT pg_current_wal_lsn() AS a1 \gset
CHECKPOINT;
SELECT pg_current_wal_lsn() AS b0 \gset
CALL sim_run_b();
SELECT pg_current_wal_lsn() AS b1 \gset
SELECT round(pg_wal_lsn_diff(:'a1', :'a0') / 20000) AS a_wal_per_delivery, round(pg_wal_lsn_diff(:'b1', :'b0') / 20000) AS b_wal_per_delivery,
  (SELECT count(*) FROM sim_jobs_a WHERE status = 'succeeded') AS a_done, (SELECT count(*) FROM sim_state WHERE status = 'succeeded') AS b_done;
\echo :a0 :a1 :b0 :b1

DROP TABLE sim_attempts_a, sim_attempts_b, sim_state, sim_jobs_b, sim_jobs_a, sim_src;
DROP PROCEDURE sim_run_a(), sim_run_b();
