import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');

/** The real service (dist/src/main.js, built by the global setup) as a child process. */
export class ServiceProcess {
  readonly output: string[] = [];
  private exitPromise: Promise<number | null>;
  /** 'close': the process has exited and its stdout and stderr pipes are closed too. */
  private closePromise: Promise<void>;
  private exitCode: number | null | undefined;

  constructor(
    readonly child: ChildProcess,
    readonly port: number,
    /** The address its API is reached at (its network namespace's address when it runs in one). */
    readonly host = '127.0.0.1',
  ) {
    child.stdout?.on('data', (d: Buffer) => this.output.push(d.toString('utf8')));
    child.stderr?.on('data', (d: Buffer) => this.output.push(d.toString('utf8')));
    this.exitPromise = new Promise((resolve) =>
      child.on('exit', (code, signal) => {
        this.exitCode = code ?? (signal ? -1 : null);
        resolve(this.exitCode);
      }),
    );
    this.closePromise = new Promise((resolve) => child.on('close', () => resolve()));
  }

  /**
   * `env` overrides the inherited environment; PORT defaults to `port`; undefined removes a variable.
   * With `netns`, the process runs in that network namespace (`ip netns exec`, which execs Node
   * itself: the child's pid and signals are Node's) and its API is reached at `host`.
   */
  static start(env: Record<string, string | undefined>, port: number, options: { netns?: string; host?: string } = {}): ServiceProcess {
    const merged: Record<string, string | undefined> = { ...process.env, PORT: String(port), ...env };
    // An inherited DATABASE_URL must not leak into the service unless the test passes one.
    if (!('DATABASE_URL' in env)) delete merged.DATABASE_URL;
    const clean: Record<string, string> = {};
    for (const [k, v] of Object.entries(merged)) if (v !== undefined) clean[k] = v;
    const main = path.join(ROOT, 'dist/src/main.js');
    const [command, args] = options.netns ? ['ip', ['netns', 'exec', options.netns, process.execPath, main]] : [process.execPath, [main]];
    const child = spawn(command, args, { cwd: ROOT, env: clean, stdio: ['ignore', 'pipe', 'pipe'] });
    return new ServiceProcess(child, port, options.host);
  }

  get url(): string {
    return `http://${this.host}:${this.port}`;
  }

  text(): string {
    return this.output.join('');
  }

  exited(): Promise<number | null> {
    return this.exitPromise;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /**
   * Resolves when /health/ready answers 200; rejects with the output if the process dies. The
   * default deadline is for a loaded machine (a start takes 2–5 s on a quiet one).
   */
  async waitReady(timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`service exited (${this.exitCode}) before ready:\n${this.text()}`);
      try {
        const res = await fetch(`${this.url}/health/ready`);
        if (res.status === 200) return;
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`service not ready after ${timeoutMs} ms:\n${this.text()}`);
  }

  /**
   * Signals the process and resolves with its exit code once it is gone with its pipes: 'exit'
   * comes while stdout and stderr may still be open, and a test file that ended there left them
   * to the jest worker, which must have nothing open when it is told to exit.
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.running) this.child.kill(signal);
    await this.closePromise;
    return this.exited();
  }
}
