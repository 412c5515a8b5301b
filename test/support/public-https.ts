import { execFileSync } from 'node:child_process';
import * as dns from 'node:dns';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import * as vm from 'node:vm';
import { Agent } from 'undici';

/**
 * Herald as an authorization server must see a confidential client: at an https address with a
 * public-looking name. The reference provider (@atproto/oauth-provider, the test PDS's) refuses a
 * client_id that is http, an IP address, `localhost`, or under .test/.local/.localhost/.invalid/
 * .example (oauth-types' httpsUriSchema and isLocalHostname, oauth-provider's
 * parseDiscoverableClientId). `herald.home.arpa` passes those checks and is never on the public
 * Internet (RFC 8375 reserves home.arpa for home networks): in the tests it is mapped to 127.0.0.1
 *
 * - for the PDS, which runs in the test process and fetches with Node's global fetch: a global
 *   undici dispatcher whose lookup answers 127.0.0.1 for it and that trusts the test certificate;
 * - for Chromium: `--host-resolver-rules` and `--ignore-certificate-errors` (browserArgs).
 *
 * In front of Herald's plain-http port stands a TLS-terminating proxy, as a reverse proxy would
 * in production.
 */
export const PUBLIC_HOST = 'herald.home.arpa';

export interface PublicHttps {
  port: number;
  url: string;
  /** Points the proxy at Herald's plain-http port (known once the app listens). */
  target: number;
  close(): Promise<void>;
}

function certificate(): { cert: string; key: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
        '-days',
        '2',
        '-subj',
        `/CN=${PUBLIC_HOST}`,
        '-addext',
        `subjectAltName=DNS:${PUBLIC_HOST}`,
      ],
      { stdio: 'ignore' },
    );
    return { cert: fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8'), key: fs.readFileSync(path.join(dir, 'key.pem'), 'utf8') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Where Node's fetch finds its dispatcher. Jest runs a test file in a context of its own, while
 * `fetch` (copied into it) is the main context's, which reads the main context's global: the
 * dispatcher is set on both.
 */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
type Realm = Record<symbol, unknown>;
function realms(): Realm[] {
  const main = vm.runInThisContext('globalThis') as Realm;
  const here = globalThis as unknown as Realm;
  return main === here ? [here] : [here, main];
}
let previous: { realm: Realm; dispatcher: unknown }[] | null = null;

/** Starts the https proxy on `port` (0: any) and routes PUBLIC_HOST to loopback for this process's fetch. */
export async function startPublicHttps(port: number): Promise<PublicHttps> {
  const { cert, key } = certificate();
  const state = { target: 0 };
  const server = https.createServer({ cert, key }, (req, res) => {
    const upstream = http.request(
      {
        host: '127.0.0.1',
        port: state.target,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, 'x-forwarded-proto': 'https' },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      res.writeHead(502).end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  const agent = new Agent({
    connect: {
      ca: [cert, ...tls.rootCertificates],
      lookup: (hostname, options, callback) => {
        if (hostname !== PUBLIC_HOST) return dns.lookup(hostname, options, callback);
        if (options.all) return callback(null, [{ address: '127.0.0.1', family: 4 }], 4);
        return callback(null, '127.0.0.1', 4);
      },
    },
  });
  previous ??= realms().map((realm) => ({ realm, dispatcher: realm[GLOBAL_DISPATCHER] }));
  for (const realm of realms()) realm[GLOBAL_DISPATCHER] = agent;
  return {
    port: bound,
    url: `https://${PUBLIC_HOST}:${bound}`,
    get target() {
      return state.target;
    },
    set target(value: number) {
      state.target = value;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const { realm, dispatcher } of previous ?? []) realm[GLOBAL_DISPATCHER] = dispatcher;
      previous = null;
      await agent.close();
    },
  };
}

/** Chromium flags that send PUBLIC_HOST to loopback and accept the test certificate. */
export const PUBLIC_HOST_BROWSER_ARGS = [`--host-resolver-rules=MAP ${PUBLIC_HOST} 127.0.0.1`, '--ignore-certificate-errors'];
