import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import * as ts from 'typescript';
import type { TestApp } from './support/app';
import { bootEngine } from './support/engine';
import { ROOT } from './support/process';
import { Receiver, startReceiver } from './support/receiver';

/**
 * A typed client generated from the document the app serves drives a real scenario end to end:
 * openapi-typescript turns /docs-json into types, the scenario (test/openapi-client/scenario.ts,
 * written with openapi-fetch against those types) must type-check strictly, and then it runs
 * against the app with its worker delivering to a real webhook receiver on loopback.
 *
 * The generated types (test/openapi-client/generated/) are made here, from the document, at every
 * run and never committed (test/openapi-client/.gitignore): a committed copy only drifts from the
 * code. `npm run typecheck` leaves the folder out (tsconfig.json), so it passes on a fresh clone;
 * the scenario is type-checked here, against what was just generated.
 */

const CLIENT_DIR = path.join(__dirname, 'openapi-client');
const GENERATED = path.join(CLIENT_DIR, 'generated', 'herald-api.ts');

let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver(() => ({ status: 200, body: { url: 'https://blog.example.com/p/1', id: 'p1' } }));
  t = await bootEngine();
  // The CLI, as a user would run it (its library build cannot load under Jest's CommonJS).
  fs.mkdirSync(path.dirname(GENERATED), { recursive: true });
  const documentFile = path.join(path.dirname(GENERATED), 'openapi.json');
  fs.writeFileSync(documentFile, JSON.stringify(t.contract.document));
  await promisify(execFile)(path.join(ROOT, 'node_modules/.bin/openapi-typescript'), [documentFile, '--output', GENERATED]);
});

afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

/**
 * What the test reads of the scenario's result. Not imported from scenario.ts: that file needs
 * the generated types, which exist only once beforeAll has run.
 */
interface PostSeen {
  id: string;
  text: string;
  status: string;
  metadata: Record<string, unknown> | null;
  jobs: Array<{ accountId: string; provider: string; status: string; remoteUrl: string | null; remoteId: string | null }>;
}
type RunScenario = (
  baseUrl: string,
  apiKey: string,
  receiverUrl: string,
) => Promise<{
  accountId: string;
  secret: string;
  post: PostSeen;
  replayedHeader: string | null;
  replayedPostId: string;
  read: PostSeen;
  pages: string[][];
  invalid: { status: number; body: unknown };
  missing: { status: number; body: unknown };
  delivered: PostSeen;
}>;

const OUT_DIR = path.join(CLIENT_DIR, 'generated', 'out');

/** Type-checks the scenario with its own strict tsconfig and emits it (to OUT_DIR) when clean. */
function compileScenario(): string[] {
  const configPath = path.join(CLIENT_DIR, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, CLIENT_DIR);
  const program = ts.createProgram(parsed.fileNames, { ...parsed.options, noEmit: false, outDir: OUT_DIR, rootDir: CLIENT_DIR });
  const diagnostics = ts.getPreEmitDiagnostics(program);
  if (diagnostics.length === 0) program.emit();
  return diagnostics.map((d) => {
    const where =
      d.file && d.start !== undefined
        ? `${path.relative(CLIENT_DIR, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1} `
        : '';
    return where + ts.flattenDiagnosticMessageText(d.messageText, '\n');
  });
}

describe('a client generated from the OpenAPI document', () => {
  it('type-checks strictly against the generated types', () => {
    expect(fs.readFileSync(GENERATED, 'utf8')).toMatch(/"\/v1\/posts": \{/);
    expect(compileScenario()).toEqual([]);
  });

  it('connects an account, schedules a post idempotently, reads it, pages the list, meets a 400 and a 404, and sees it delivered', async () => {
    // The JavaScript the type-checked scenario compiled to (the test above emits it).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { runScenario } = require(path.join(OUT_DIR, 'scenario.js')) as { runScenario: RunScenario };
    const result = await runScenario(
      `http://127.0.0.1:${(t.app.getHttpServer().address() as { port: number }).port}`,
      t.adminKey,
      receiver.urlFor('/hook'),
    );

    expect(result.post).toMatchObject({ text: 'Hello from a generated client', status: 'scheduled', metadata: { campaign: 'launch' } });
    expect(result.post.jobs).toEqual([expect.objectContaining({ accountId: result.accountId, provider: 'webhook' })]);
    expect(result.replayedHeader).toBe('true');
    expect(result.replayedPostId).toBe(result.post.id);
    expect(result.read.id).toBe(result.post.id);

    // Three posts, one per page, newest first, each exactly once.
    expect(result.pages).toHaveLength(3);
    expect(result.pages.every((p) => p.length === 1)).toBe(true);
    expect(new Set(result.pages.flat()).size).toBe(3);
    expect(result.pages[2]).toEqual([result.post.id]);

    expect(result.invalid.status).toBe(400);
    expect(result.invalid.body).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.stringContaining('targets') });
    expect(result.missing.status).toBe(404);
    expect(result.missing.body).toEqual({ statusCode: 404, error: 'Not Found', message: expect.stringContaining('was not found') });

    expect(result.delivered.status).toBe('published');
    expect(result.delivered.jobs[0]).toMatchObject({ status: 'succeeded', remoteUrl: 'https://blog.example.com/p/1', remoteId: 'p1' });
    // The receiver got one signed delivery of that post (the replay made no second one).
    const deliveries = receiver.requests.filter((r) => r.path === '/hook');
    expect(deliveries).toHaveLength(1);
    const [delivery] = deliveries;
    const verified = new Webhook(result.secret).verify(delivery?.body ?? '', delivery?.headers as Record<string, string>);
    const body = verified as { data: { postId: string; text: string } };
    expect(body.data).toMatchObject({ postId: result.post.id, text: 'Hello from a generated client' });
  }, 120_000);
});
