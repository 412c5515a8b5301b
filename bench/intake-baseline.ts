import * as http from 'node:http';
import { Pool } from 'pg';

/**
 * The intake baseline: a bare `node:http` server with a `pg` pool doing one committed
 * `INSERT … RETURNING` per request (autocommit: the answer leaves after the commit), the floor
 * any HTTP intake on this machine and database pays. argv: <connectionString> <poolSize>.
 * Prints `PORT <n>` when listening; exits on SIGTERM.
 */
const [connectionString, poolSize] = process.argv.slice(2);
const pool = new Pool({ connectionString, max: Number(poolSize ?? '20') });

async function main(): Promise<void> {
  await pool.query(`CREATE TABLE IF NOT EXISTS bench_intake (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), text text NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now())`);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let text: string;
      try {
        text = String((JSON.parse(Buffer.concat(chunks).toString()) as { text: unknown }).text);
      } catch {
        res.writeHead(400).end();
        return;
      }
      pool.query<{ id: string }>('INSERT INTO bench_intake (text) VALUES ($1) RETURNING id', [text]).then(
        ({ rows }) => {
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ id: rows[0].id }));
        },
        () => res.writeHead(500).end(),
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address && typeof address === 'object') process.stdout.write(`PORT ${address.port}\n`);
  });
  process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
