import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';

/**
 * A program the tests need from a Debian package (Chromium for the settings page's browser tests,
 * PgBouncer for the fault suite's pooler), made sure of once by a global setup, so a run on a
 * fresh machine needs no step by hand where it can be helped:
 *
 * - present at `wanted`: used;
 * - missing, and this process is root on a Debian-like system: `apt-get update`, then
 *   `apt-get install -y <package>`, said loudly once, then the package's own path;
 * - missing otherwise (not root, no apt-get, or `<noInstallEnv>=0`): the run stops at once with
 *   the one command to run first, instead of the tests that need it failing one by one.
 */
export interface DebianProgram {
  /** The Debian package that installs it. */
  pkg: string;
  /** Where the package installs the program. */
  installs: string;
  /** What needs it, for the messages: "the settings page's browser tests". */
  neededBy: string;
  /** Set to 0, the setup does not install it (and stops when it is missing). */
  noInstallEnv: string;
  /** The run to repeat once it is installed: "npm test". */
  rerun: string;
  /** How else to point the tests at one, said when the run stops. */
  orElse?: string;
}

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

/** What a person runs first where the tests cannot install `program` themselves. */
export function installCommand(program: DebianProgram): string {
  return `sudo apt-get install -y ${program.pkg}`;
}

/** Returns the program to use (`wanted`, or the package's path once installed), or throws with the command to run first. */
export function ensureDebianProgram(program: DebianProgram, wanted: string, say: (line: string) => void): string {
  if (executable(wanted)) return wanted;

  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const mayInstall = process.env[program.noInstallEnv] !== '0';
  if (isRoot && mayInstall && onPath('apt-get')) {
    const banner = '='.repeat(100);
    say(
      [
        banner,
        `No ${program.pkg} at ${wanted} (for ${program.neededBy}).`,
        `Installing Debian's ${program.pkg} package now (apt-get update, then apt-get install -y ${program.pkg}; once).`,
        banner,
      ].join('\n'),
    );
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    // Another apt-get on the machine (a second checkout's setup) holds dpkg's lock for a while: wait for it, not fail.
    const lockWait = ['-o', 'DPkg::Lock::Timeout=300'];
    execFileSync('apt-get', [...lockWait, 'update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', [...lockWait, 'install', '-y', '-qq', program.pkg], { stdio: 'inherit', env });
    if (executable(program.installs)) {
      say(`Installed: ${program.installs}, for ${program.neededBy}.`);
      return program.installs;
    }
    throw new Error(`apt-get installed ${program.pkg}, but ${program.installs} is still missing`);
  }

  const why = !mayInstall
    ? `${program.noInstallEnv}=0 says not to install it`
    : !isRoot
      ? 'installing it needs root'
      : 'this system has no apt-get';
  throw new Error(
    `No ${program.pkg} at ${wanted} (for ${program.neededBy}), and the tests cannot install Debian's ${program.pkg} ` +
      `package (${why}): run\n\n    ${installCommand(program)}\n\nonce, then ${program.rerun} again` +
      (program.orElse ? ` (or ${program.orElse}).` : '.'),
  );
}
