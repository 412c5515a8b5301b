import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { claimDataFolder, DataFolderInUseError, FolderOwner, ownerFilePath, processStartTime } from './embedded-owner';

/** The claim on real files, against real processes (a `sleep` stands in for another Herald). */
describe('claimDataFolder', () => {
  let root: string;
  let dataDir: string;
  let other: ChildProcess;
  const ports = { httpPort: 3000, postgresPort: 54329 };
  const write = (owner: Partial<FolderOwner> | string) =>
    fs.writeFileSync(ownerFilePath(dataDir), typeof owner === 'string' ? owner : JSON.stringify(owner));
  const recorded = () => JSON.parse(fs.readFileSync(ownerFilePath(dataDir), 'utf8')) as FolderOwner;
  const otherOwner = (): FolderOwner => ({
    pid: other.pid!,
    startTime: processStartTime(other.pid!),
    httpPort: 4000,
    postgresPort: 54400,
  });

  beforeAll(() => {
    other = spawn('sleep', ['60'], { stdio: 'ignore' });
  });
  afterAll(async () => {
    // Waited for: a process killed but not yet reaped is still a handle of the jest worker.
    if (other.exitCode !== null || other.signalCode !== null) return;
    const gone = new Promise((resolve) => other.once('exit', resolve));
    other.kill('SIGKILL');
    await gone;
  });
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-claim-'));
    dataDir = path.join(root, 'postgres');
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('records this process beside the cluster and gives the folder up on release', async () => {
    const claim = await claimDataFolder(dataDir, ports);
    expect(ownerFilePath(dataDir)).toBe(path.join(root, 'postgres.owner.json'));
    expect(recorded()).toEqual({ pid: process.pid, startTime: processStartTime(process.pid), httpPort: 3000, postgresPort: 54329 });
    claim.recordHttpPort(3100);
    expect(recorded().httpPort).toBe(3100);
    claim.release();
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it('refuses a folder a live process holds, naming its pid and ports, and leaves its record as it was', async () => {
    write(otherOwner());
    const before = fs.readFileSync(ownerFilePath(dataDir), 'utf8');
    const refused = claimDataFolder(dataDir, ports);
    await expect(refused).rejects.toThrow(DataFolderInUseError);
    await expect(refused).rejects.toThrow(
      `Another Herald (pid ${other.pid}, HTTP port 4000, PostgreSQL port 54400) runs the embedded PostgreSQL in ${dataDir}`,
    );
    expect(fs.readFileSync(ownerFilePath(dataDir), 'utf8')).toBe(before);
    expect(fs.readdirSync(root)).toEqual(['postgres.owner.json']);
  });

  it.each<[string, () => Partial<FolderOwner> | string]>([
    ['a dead pid (kill -9, a crash)', () => ({ ...otherOwner(), pid: 2 ** 22 + 1 })],
    ['a live pid that started at another time (recycled after a crash)', () => ({ ...otherOwner(), startTime: '1' })],
    ['unreadable JSON', () => '{"pid": 12'],
  ])('takes over a stale record: %s', async (_, stale) => {
    write(stale());
    await claimDataFolder(dataDir, ports);
    expect(recorded().pid).toBe(process.pid);
  });

  it('does not release a claim another process holds now', async () => {
    const claim = await claimDataFolder(dataDir, ports);
    write(otherOwner()); // as if this one had been judged dead and taken over
    claim.release();
    expect(recorded().pid).toBe(other.pid);
  });

  it('says which file to remove when a takeover lock stays in the way', async () => {
    write({ ...otherOwner(), startTime: '1' });
    fs.mkdirSync(`${ownerFilePath(dataDir)}.takeover`);
    await expect(claimDataFolder(dataDir, ports, { waitMs: 100 })).rejects.toThrow(
      `If no Herald is starting on this folder, remove ${ownerFilePath(dataDir)}.takeover and start again.`,
    );
  });
});
