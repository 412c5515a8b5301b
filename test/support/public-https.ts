import { execFileSync } from 'node:child_process';
import * as dns from 'node:dns';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';

/**
 * Herald as an authorization server must see a confidential client: at an https address with a
 * public-looking name. The reference provider (@atproto/oauth-provider, the test PDS's) refuses a
 * client_id that is http, an IP address, `localhost`, or under .test/.local/.localhost/.invalid/
 * .example (oauth-types' httpsUriSchema and isLocalHostname, oauth-provider's
 * parseDiscoverableClientId). `herald.home.arpa` passes those checks and is never on the public
 * Internet (RFC 8375 reserves home.arpa for home networks): in the tests it is mapped to 127.0.0.1
 *
 * - for the PDS, which runs in the test process: Node's `dns.lookup` answers 127.0.0.1 for it, and
 *   the test certificate joins the process's default CAs (`tls.setDefaultCACertificates`), both
 *   put back on close. The PDS fetches through an undici dispatcher of its own (its SSRF guard,
 *   @atproto-labs/fetch-node, which passes every request its own dispatcher even with the guard
 *   off), so the name is mapped where every dispatcher's connections look names up and check
 *   certificates: in `net` and `tls`, not in one dispatcher;
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

type Lookup = typeof dns.lookup;
/** The module object itself (the one `net` reads), not the copy `import * as` makes of it. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dnsModule = require('node:dns') as { lookup: Lookup };
let restore: (() => void) | null = null;

/**
 * Maps PUBLIC_HOST to 127.0.0.1 for every lookup of this process (`net` reads `dns.lookup` at
 * each connection) and trusts `cert` as a CA, until the returned function puts both back.
 */
function mapPublicHost(cert: string): () => void {
  const lookup = dnsModule.lookup;
  const cas = tls.getCACertificates('default');
  const mapped = (hostname: string, ...rest: unknown[]): void => {
    if (hostname !== PUBLIC_HOST) return (lookup as (...args: unknown[]) => void)(hostname, ...rest);
    const callback = rest[rest.length - 1] as (err: null, address: unknown, family?: number) => void;
    const options = rest.length > 1 ? rest[0] : undefined;
    const all = typeof options === 'object' && options !== null && (options as dns.LookupOptions).all === true;
    process.nextTick(() => (all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4)));
  };
  dnsModule.lookup = mapped as unknown as Lookup;
  tls.setDefaultCACertificates([...cas, cert]);
  return () => {
    dnsModule.lookup = lookup;
    tls.setDefaultCACertificates(cas);
  };
}

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
  restore ??= mapPublicHost(cert);
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
      restore?.();
      restore = null;
    },
  };
}

/** Chromium flags that send PUBLIC_HOST to loopback and accept the test certificate. */
export const PUBLIC_HOST_BROWSER_ARGS = [`--host-resolver-rules=MAP ${PUBLIC_HOST} 127.0.0.1`, '--ignore-certificate-errors'];
