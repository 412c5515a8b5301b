import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The top self-time functions of V8 CPU profiles (`node --cpu-prof`, e.g. the worker's during
 * `BENCH_PROFILE=<dir> npm run bench`). argv: <profile or directory> [count, default 10].
 * Self time is summed per function (name, file, line) over every profile given.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [target, countText] = process.argv.slice(2);
const files = fs.statSync(target).isDirectory()
  ? fs
      .readdirSync(target)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => path.join(target, f))
  : [target];
const self = new Map<string, number>();
let total = 0;
for (const file of files) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (!node) return;
    const us = profile.timeDeltas[i] ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url ? `${url.replace(/^file:\/\//, '').replace(/^.*node_modules\//, '~/')}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    self.set(key, (self.get(key) ?? 0) + us);
    total += us;
  });
}
const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(countText ?? 10));
console.log(`${files.length} profile(s), ${(total / 1e6).toFixed(2)} s sampled`);
for (const [key, us] of rows)
  console.log(`${((us / total) * 100).toFixed(1).padStart(5)} %  ${(us / 1e3).toFixed(0).padStart(6)} ms  ${key}`);
