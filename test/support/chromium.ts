import { DebianProgram, ensureDebianProgram, installCommand } from './debian-package';

/**
 * The browser of the settings page's tests: Debian's `chromium` package, driven by
 * playwright-core (which downloads no browser of its own, and a test tool's own browser download
 * fails on machines without the wider internet). The global setup makes sure it is there before
 * any test runs (./debian-package.ts: installed through apt-get when missing and run as root,
 * else the run stops at once with the one command to run first); HERALD_TEST_INSTALL_BROWSER=0
 * says not to install it.
 *
 * HERALD_TEST_CHROMIUM points at another Chromium (or, pointed at a missing file, simulates a
 * machine without one: the setup then installs Debian's, or says what to run).
 */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';
export const ENV_CHROMIUM = 'HERALD_TEST_CHROMIUM';
export const ENV_INSTALL_BROWSER = 'HERALD_TEST_INSTALL_BROWSER';

const CHROMIUM: DebianProgram = {
  pkg: 'chromium',
  installs: DEBIAN_CHROMIUM,
  neededBy: "the settings page's browser tests",
  noInstallEnv: ENV_INSTALL_BROWSER,
  rerun: 'npm test',
  orElse: `set ${ENV_CHROMIUM} to a Chromium binary`,
};

/** What a person runs first where the tests cannot install the browser themselves. */
export const INSTALL_COMMAND = installCommand(CHROMIUM);

/** The Chromium the browser tests launch (in a test worker: what the global setup settled on). */
export function chromiumPath(): string {
  return process.env[ENV_CHROMIUM] || DEBIAN_CHROMIUM;
}

/**
 * Called once per run by the global setup: returns the Chromium to use, installing Debian's when
 * it can, or throws with the command to run first.
 */
export function ensureChromium(say: (line: string) => void): string {
  return ensureDebianProgram(CHROMIUM, chromiumPath(), say);
}
