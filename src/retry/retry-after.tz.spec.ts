/**
 * HTTP-dates must read as GMT whatever the process time zone (RFC 9110 §5.6.7: asctime carries no
 * zone but is GMT). Setting process.env.TZ inside a Jest test does not reach V8: Jest gives each
 * test file a copy of process.env, and only assignments to the real one reset Node's time-zone
 * cache. So this spec runs retry-after.ts (transpiled, unchanged) in a child Node process whose
 * TZ really is set, and first proves that zone is in effect by showing Date.parse misreading
 * asctime there. A parseHttpDate built on Date.parse or local-time constructors fails it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';

interface ZoneReport {
  zone: string;
  offsetMinutes: number;
  naiveAsctime: number;
  imf: number | null;
  rfc850: number | null;
  asctime: number | null;
  asctimeRetryAfter: number | null;
  winterAsctime: number | null;
}

const ZONES = ['America/New_York', 'Asia/Kolkata', 'Pacific/Chatham'];
const RFC_INSTANT = Date.UTC(1994, 10, 6, 8, 49, 37);
const NOW_MS = Date.UTC(1994, 10, 6, 8, 0, 0);

function runInZones(): ZoneReport[] {
  const source = readFileSync(join(__dirname, 'retry-after.ts'), 'utf8');
  const compiled = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  }).outputText;

  // The child evaluates the module from stdin-free source text (no temp files), then for each
  // zone assigns the real process.env.TZ, which does reset V8's zone, and reports what it parsed.
  const script = `
    const Module = require('node:module');
    const m = new Module('retry-after.js');
    m._compile(${JSON.stringify(compiled)}, 'retry-after.js');
    const { parseHttpDate, parseRetryAfter } = m.exports;
    const now = new Date(${NOW_MS});
    const ms = (v) => { const d = parseHttpDate(v, now); return d === null ? null : d.getTime(); };
    const reports = ${JSON.stringify(ZONES)}.map((zone) => {
      process.env.TZ = zone;
      return {
        zone,
        offsetMinutes: new Date(${RFC_INSTANT}).getTimezoneOffset(),
        naiveAsctime: Date.parse('Sun Nov  6 08:49:37 1994'),
        imf: ms('Sun, 06 Nov 1994 08:49:37 GMT'),
        rfc850: ms('Sunday, 06-Nov-94 08:49:37 GMT'),
        asctime: ms('Sun Nov  6 08:49:37 1994'),
        asctimeRetryAfter: parseRetryAfter('Sun Nov  6 08:49:37 1994', now),
        winterAsctime: ms('Thu Jan  1 00:00:00 1970'),
      };
    });
    process.stdout.write(JSON.stringify(reports));
  `;
  const out = execFileSync(process.execPath, ['-e', script], {
    env: { ...process.env, TZ: ZONES[0] },
    encoding: 'utf8',
  });
  return JSON.parse(out) as ZoneReport[];
}

describe('parseHttpDate outside GMT', () => {
  const reports = runInZones();

  it.each(ZONES)('runs the child really in %s (Date.parse misreads asctime there)', (zone) => {
    const r = reports.find((x) => x.zone === zone)!;
    expect(r.offsetMinutes).not.toBe(0);
    expect(r.naiveAsctime).not.toBe(RFC_INSTANT);
  });

  it.each(ZONES)('reads all three formats as the same GMT instant in %s', (zone) => {
    const r = reports.find((x) => x.zone === zone)!;
    expect({ imf: r.imf, rfc850: r.rfc850, asctime: r.asctime }).toEqual({
      imf: RFC_INSTANT,
      rfc850: RFC_INSTANT,
      asctime: RFC_INSTANT,
    });
    expect(r.winterAsctime).toBe(0);
  });

  it.each(ZONES)('measures an asctime Retry-After from now in GMT in %s', (zone) => {
    const r = reports.find((x) => x.zone === zone)!;
    expect(r.asctimeRetryAfter).toBe(RFC_INSTANT - NOW_MS);
  });
});
