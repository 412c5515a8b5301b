import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';

/**
 * The browser of the settings page's tests: Debian's `chromium` package, driven by
 * playwright-core (which downloads no browser of its own, and a test tool's own browser download
 * fails on machines without the wider internet). The global setup makes sure it is there before
 * any test runs, so `npm test` on a fresh machine needs no step by hand where it can be helped:
 *
 * - present (HERALD_TEST_CHROMIUM, default /usr/bin/chromium): used;
 * - missing, and this process is root on a Debian-like system: `apt-get install -y chromium`
 *   (after `apt-get update`), said loudly once, then /usr/bin/chromium;
 * - missing otherwise (not root, no apt-get, or HERALD_TEST_INSTALL_BROWSER=0): the run stops at
 *   once with the one command to run first, instead of the browser tests failing one by one.
 *
 * HERALD_TEST_CHROMIUM points at another Chromium (or, pointed at a missing file, simulates a
 * machine without one: the setup then installs Debian's, or says what to run).
 */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';
export const ENV_CHROMIUM = 'HERALD_TEST_CHROMIUM';
export const ENV_INSTALL_BROWSER = 'HERALD_TEST_INSTALL_BROWSER';
/** What a person runs first where the tests cannot install the browser themselves. */
export const INSTALL_COMMAND = 'sudo apt-get install -y chromium';

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && executable(`${dir}/${command}`));
}

/** The Chromium the browser tests launch (in a test worker: what the global setup settled on). */
export function chromiumPath(): string {
  return process.env[ENV_CHROMIUM] || DEBIAN_CHROMIUM;
}

/**
 * Called once per run by the global setup: returns the Chromium to use, installing Debian's when
 * it can, or throws with the command to run first.
 */
export function ensureChromium(say: (line: string) => void): string {
  const wanted = chromiumPath();
  if (executable(wanted)) return wanted;

  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const mayInstall = process.env[ENV_INSTALL_BROWSER] !== '0';
  if (isRoot && mayInstall && onPath('apt-get')) {
    const banner = '='.repeat(100);
    say(
      [
        banner,
        `No Chromium at ${wanted}: the settings page's browser tests need one.`,
        `Installing Debian's chromium package now (apt-get update, then apt-get install -y chromium; a minute or two, once).`,
        banner,
      ].join('\n'),
    );
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env });
    if (executable(DEBIAN_CHROMIUM)) {
      say(`Installed: ${DEBIAN_CHROMIUM}. The browser tests use it.`);
      return DEBIAN_CHROMIUM;
    }
    throw new Error(`apt-get installed chromium, but ${DEBIAN_CHROMIUM} is still missing`);
  }

  const why = !mayInstall
    ? `${ENV_INSTALL_BROWSER}=0 says not to install it`
    : !isRoot
      ? 'installing it needs root'
      : 'this system has no apt-get';
  throw new Error(
    `No Chromium at ${wanted}, and the tests cannot install it (${why}). The settings page's browser tests drive ` +
      `Debian's chromium package: run\n\n    ${INSTALL_COMMAND}\n\nonce, then npm test again (or set ${ENV_CHROMIUM} to a Chromium binary).`,
  );
}
