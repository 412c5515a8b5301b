import type * as http from 'node:http';
import type * as net from 'node:net';
import { Agent, buildConnector, Client, type Dispatcher } from 'undici';
import { guardedLookup } from './ssrf-guard';

/**
 * The undici dispatchers the outbound layer (http-client.ts) sends through, and how they connect.
 *
 * One keep-alive Agent per guard policy (and connect timeout: the timer belongs to the
 * connector, see below), shared by every request of the process: connections are pooled per
 * origin, up to 256 to one host:port (the worker's concurrency is 200 by default, and the
 * per-account in-flight limit is far lower). A guarded Agent's connections are only ever made
 * through the guard's lookup, so a connection it reuses was checked when it was made; an Agent
 * that allows private addresses never lends one to a guarded request.
 *
 * Every connection is opened by `timedConnector`: undici's own `buildConnector` (net/tls connect,
 * TLS session cache, TCP keep-alive) with
 * - `lookup`: the SSRF guard's resolver (ssrf-guard.ts `guardedLookup`). `net.connect` connects to
 *   exactly the addresses it returns and nothing else, so the check and the use are one step (DNS
 *   rebinding cannot get between them). undici passes `connect.lookup` through to `net.connect` /
 *   `tls.connect`; dispatchers.spec.ts proves it on a real connection, so an undici upgrade that
 *   stopped doing so would fail there. IP literals never reach a lookup: the layer checks them
 *   before it dispatches.
 * - a connect timer of its own, from the connector's call (DNS included) to 'connect' /
 *   'secureConnect': undici's would do the same, but past a second it runs on timers with about
 *   500 ms of slack, and its message names the addresses it tried (the layer never shows an
 *   address behind a name).
 * - HTTP/1.1 only (no ALPN h2): the layer's rules (the header cap, the codes, what a reset
 *   means) are HTTP/1.1's, as they were on node:http.
 */

/**
 * Idle keep-alive sockets are closed after this long. Node's own http server closes idle
 * connections after 5 s (`server.keepAliveTimeout`), as do many proxies; reusing a socket the
 * server is closing gets an ECONNRESET, so ours let go first.
 */
export const IDLE_SOCKET_TIMEOUT_MS = 4_000;

/** Node's own default, stated here so a `--max-http-header-size` flag cannot raise it for us. */
export const MAX_HEADER_BYTES = 16 * 1024;

/** The connector's timer expired: `code` is the layer's own (see layerErrorCode). */
export class ConnectTimeoutError extends Error {
  readonly code = 'connect_timeout';
  constructor(timeoutMs: number) {
    super(`no connection within ${timeoutMs} ms`);
    this.name = 'ConnectTimeoutError';
  }
}

type Open = (options: buildConnector.Options, callback: buildConnector.Callback) => net.Socket;

/**
 * `open` with a connect timer: past `timeoutMs` the socket is destroyed and the connection fails
 * with connect_timeout. Returns the socket, which lets undici cancel an attempt no request waits
 * for any more.
 */
export function timedConnector(open: Open, timeoutMs: number): buildConnector.connector {
  return (options, callback) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const socket = open(options, (...args) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      callback(...args);
    });
    if (!done) {
      timer = setTimeout(() => {
        if (done) return;
        done = true;
        const err = new ConnectTimeoutError(timeoutMs);
        socket.destroy(err);
        callback(err, null);
      }, timeoutMs);
    }
    return socket;
  };
}

/** undici's own connector, resolving names with `lookup` (net's default when undefined). */
function defaultOpen(lookup: net.LookupFunction | undefined): Open {
  // timeout 0: no timer of undici's (timedConnector has one).
  return buildConnector({ allowH2: false, timeout: 0, ...(lookup === undefined ? {} : { lookup }) }) as unknown as Open;
}

/** The lookup a policy connects with: the guard's, or net's default when private destinations are allowed. */
function policyLookup(allowPrivate: boolean): net.LookupFunction | undefined {
  return allowPrivate ? undefined : guardedLookup(false);
}

/**
 * A keep-alive Agent whose connections resolve names with `lookup` and time out after
 * `connectTimeoutMs`. Exported for dispatchers.spec.ts, which proves on it that undici connects
 * to what the lookup answers.
 */
export function keepAliveAgent(lookup: net.LookupFunction | undefined, connectTimeoutMs: number): Agent {
  return new Agent(poolOptions(timedConnector(defaultOpen(lookup), connectTimeoutMs)));
}

/**
 * Connections through a caller's `http.Agent` (SendOptions.agent): its `createConnection`, with
 * the guard's lookup passed in as it would be by `http.request`.
 */
function agentOpen(agent: http.Agent, lookup: net.LookupFunction | undefined): Open {
  return (options, callback) => {
    const https = options.protocol === 'https:';
    // servername: what an https.Agent's createConnection passes to tls.connect for SNI.
    const args: http.ClientRequestArgs & { servername?: string } = {
      host: options.hostname,
      port: options.port === '' ? (https ? 443 : 80) : Number(options.port),
      servername: options.servername ?? undefined,
      lookup,
    };
    const created = agent.createConnection(args);
    // An agent that creates its sockets asynchronously is not supported (undici takes the error).
    if (created === null || created === undefined) throw new Error('the agent created no connection');
    const socket = created as net.Socket;
    socket.once(https ? 'secureConnect' : 'connect', () => callback(null, socket));
    socket.once('error', (err) => callback(err, null));
    return socket;
  };
}

function poolOptions(connect: buildConnector.connector): Agent.Options {
  return {
    connect,
    connections: 256,
    // One request at a time per connection, as node:http does.
    pipelining: 1,
    keepAliveTimeout: IDLE_SOCKET_TIMEOUT_MS,
    // A server's shorter `Keep-Alive: timeout=n` hint is honoured less one second (Node's
    // agent does the same), never longer than our own.
    keepAliveMaxTimeout: IDLE_SOCKET_TIMEOUT_MS,
    keepAliveTimeoutThreshold: 1_000,
    // The layer's total deadline bounds the exchange: no idle timer of undici's may end it
    // earlier, or later keep a trickling server alive.
    headersTimeout: 0,
    bodyTimeout: 0,
    maxHeaderSize: MAX_HEADER_BYTES,
    allowH2: false,
  };
}

/** Every Agent made, so that closeIdle can reach them. */
const made = new Set<Dispatcher>();
let shared = new Map<string, Agent>();
let throughAgents = new WeakMap<http.Agent, Map<string, Agent>>();

function cached(map: Map<string, Agent>, key: string, make: () => Agent): Agent {
  let agent = map.get(key);
  if (agent === undefined) {
    agent = make();
    map.set(key, agent);
    made.add(agent);
  }
  return agent;
}

export interface DispatcherChoice {
  /** The URL's origin (only used for a connection of its own). */
  origin: string;
  allowPrivate: boolean;
  connectTimeoutMs: number;
  /** SendOptions.agent: connections through this http.Agent; false: a connection of its own. */
  agent?: http.Agent | false;
}

export interface ChosenDispatcher {
  dispatcher: Dispatcher;
  /** To call once the exchange is over (closes a one-off connection). */
  release: (() => void) | null;
}

/** The dispatcher a request goes through (see the file comment). */
export function dispatcherFor(choice: DispatcherChoice): ChosenDispatcher {
  const key = `${choice.allowPrivate ? 'open' : 'guarded'}:${choice.connectTimeoutMs}`;
  if (choice.agent === undefined) {
    const dispatcher = cached(shared, key, () => keepAliveAgent(policyLookup(choice.allowPrivate), choice.connectTimeoutMs));
    return { dispatcher, release: null };
  }
  if (choice.agent === false) {
    // No agent: a connection of its own, closed after the answer (pipelining 0 sends
    // `connection: close`, as node:http does without an agent).
    const connect = timedConnector(defaultOpen(policyLookup(choice.allowPrivate)), choice.connectTimeoutMs);
    const client = new Client(choice.origin, { ...poolOptions(connect), pipelining: 0 });
    // After undici's callbacks, not from inside them.
    const release = (): void => {
      setImmediate(() => void client.destroy().catch(() => undefined));
    };
    return { dispatcher: client, release };
  }
  const agent = choice.agent;
  let perAgent = throughAgents.get(agent);
  if (perAgent === undefined) {
    perAgent = new Map();
    throughAgents.set(agent, perAgent);
  }
  const dispatcher = cached(
    perAgent,
    key,
    () => new Agent(poolOptions(timedConnector(agentOpen(agent, policyLookup(choice.allowPrivate)), choice.connectTimeoutMs))),
  );
  return { dispatcher, release: null };
}

/**
 * Closes the idle keep-alive connections (shutdown, tests). Requests in flight are not touched:
 * each Agent closes once its requests are done, and the next request gets a new Agent.
 */
export function closeIdle(): void {
  for (const agent of made) void agent.close().catch(() => undefined);
  made.clear();
  shared = new Map();
  throughAgents = new WeakMap();
}
