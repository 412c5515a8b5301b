import * as dns from 'node:dns';
import * as net from 'node:net';
import * as ipaddr from 'ipaddr.js';

/**
 * Server-side request forgery guard for user-supplied URLs (webhook endpoints, Bluesky services).
 *
 * Two checks, because one is not enough:
 * - `assertPublicUrl` at save time gives the user an immediate, readable refusal.
 * - `guardedLookup` at connect time is what actually protects: a hostname can resolve to a public
 *   address when the account is saved and to 127.0.0.1 or 169.254.169.254 a minute later (DNS
 *   rebinding). Node connects to exactly the addresses our lookup returns, so checking them there
 *   closes the window between the check and the use.
 *
 * `HERALD_ALLOW_PRIVATE_URLS=true` switches both off (a self-hosted blog on the LAN).
 */

/** The code of the connection error raised when a destination address is refused. */
export const BLOCKED_ADDRESS_CODE = 'EBLOCKEDADDRESS';

const ALLOW_HINT = 'set HERALD_ALLOW_PRIVATE_URLS=true to allow private destinations';

/**
 * Cloud instance-metadata hostnames. They resolve to link-local or private addresses that the
 * address check refuses anyway; naming them refuses them even where a resolver maps them elsewhere
 * (e.g. through a search domain or a split-horizon DNS).
 */
const METADATA_HOSTNAMES: ReadonlySet<string> = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.internal',
  'metadata.tencentyun.com',
  'metadata.platformequinix.com',
]);

/** Addresses that get a friendlier name than their range in messages. */
const METADATA_ADDRESSES: ReadonlySet<string> = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean...
  '169.254.170.2', // AWS ECS task metadata
  '100.100.100.200', // Alibaba Cloud
  '192.0.0.192', // Oracle Cloud (classic)
  'fd00:ec2::254', // AWS IMDS over IPv6
]);

const RANGE_LABELS: Readonly<Record<string, string>> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  reserved: 'reserved',
  uniqueLocal: 'unique-local',
  ipv4Compatible: 'IPv4-compatible IPv6',
  rfc6145: 'IPv4-translated IPv6',
  rfc6052: 'NAT64',
  '6to4': '6to4 tunnel',
  teredo: 'Teredo tunnel',
  deprecatedSiteLocal: 'site-local',
};

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * The name of the special range `ip` belongs to, or null when it is an ordinary public unicast
 * address. Anything that does not parse as an IP address counts as blocked ('invalid'): the guard
 * fails closed.
 */
export function blockedRange(ip: string): string | null {
  // A zone index (fe80::1%eth0) is not part of the address; link-local is refused anyway.
  const text = stripBrackets(ip.trim()).replace(/%.*$/, '');
  if (!ipaddr.isValid(text)) return 'invalid';
  // process() unwraps IPv4-mapped IPv6 (::ffff:127.0.0.1) into the IPv4 address it reaches.
  const addr = ipaddr.process(text);
  if (METADATA_ADDRESSES.has(addr.toString())) return 'metadata';
  if (addr.kind() === 'ipv6') {
    const parts = (addr as ipaddr.IPv6).parts;
    // ::/96 (IPv4-compatible, RFC 4291 §2.5.5.1, deprecated) has no range name in ipaddr.js but
    // can still reach an IPv4 host through a tunnel (::127.0.0.1); :: and ::1 are in it too.
    if (parts.slice(0, 6).every((p) => p === 0)) {
      const range = addr.range();
      return range === 'unicast' ? 'ipv4Compatible' : range;
    }
  }
  // Only ordinary unicast passes: every named range (private, loopback, link-local, unique-local,
  // CGNAT, multicast, reserved, documentation, 6to4, Teredo, NAT64, discard...) is refused.
  const range = addr.range();
  return range === 'unicast' ? null : range;
}

/** True for every address a webhook must not reach unless private URLs are allowed. */
export function isBlockedAddress(ip: string): boolean {
  return blockedRange(ip) !== null;
}

/** True for the cloud metadata hostnames, compared case-insensitively and without a trailing dot. */
export function isBlockedHostname(hostname: string): boolean {
  return METADATA_HOSTNAMES.has(hostname.toLowerCase().replace(/\.$/, ''));
}

function describeRange(range: string): string {
  if (range === 'metadata') return 'cloud metadata';
  return RANGE_LABELS[range] ?? range;
}

export type BlockedUrlReason =
  'invalid_url' | 'unsupported_protocol' | 'credentials_in_url' | 'blocked_hostname' | 'blocked_address' | 'unresolvable';

/** A URL refused by the guard; the message is for a person and never contains the full URL. */
export class BlockedUrlError extends Error {
  constructor(
    readonly reason: BlockedUrlReason,
    message: string,
  ) {
    super(message);
    this.name = 'BlockedUrlError';
  }
}

/**
 * Says which kind of address was refused, never which address a name resolved to: the message
 * reaches the workspace (API answers, attempt history), and a private name's address is a map of
 * the operator's network. An IP literal is named, as the user typed it.
 */
function blockedAddressMessage(host: string, range: string): string {
  const what = describeRange(range);
  const article = /^(?:[aeio]|un[^i]|IPv)/i.test(what) ? 'an' : 'a';
  const target = net.isIP(host) ? `${host} is` : `${host} resolves to`;
  return `${target} ${article} ${what} address; ${ALLOW_HINT}`;
}

function blockedHostnameMessage(host: string): string {
  return `${host} is a cloud metadata hostname; ${ALLOW_HINT}`;
}

/** Resolves a hostname to all its addresses (injectable for tests). */
export type ResolveAll = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

const resolveAll: ResolveAll = (hostname) => dns.promises.lookup(hostname, { all: true });

/**
 * Save-time check of a user-supplied URL: absolute http(s), no credentials (they would be stored
 * in plain config and leak into logs), and unless `allowPrivate` every address the host resolves
 * to must be public. A host that does not resolve is refused too: the check cannot pass without
 * addresses, and a typo is better reported now than as the first failed delivery.
 */
export async function assertPublicUrl(url: string, allowPrivate: boolean, lookup: ResolveAll = resolveAll): Promise<URL> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BlockedUrlError('invalid_url', 'is not a valid absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new BlockedUrlError('unsupported_protocol', `must use http: or https:, not ${parsed.protocol}`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new BlockedUrlError('credentials_in_url', 'must not contain a user name or password (put credentials in a header instead)');
  }
  if (parsed.hostname === '') throw new BlockedUrlError('invalid_url', 'has no host');
  if (allowPrivate) return parsed;

  const host = stripBrackets(parsed.hostname);
  if (isBlockedHostname(host)) throw new BlockedUrlError('blocked_hostname', blockedHostnameMessage(host));
  // The WHATWG parser already canonicalises IPv4 literals (0x7f.1 → 127.0.0.1), so a literal is
  // checked as is and never sent to the resolver.
  if (net.isIP(host) !== 0) {
    const range = blockedRange(host);
    if (range !== null) throw new BlockedUrlError('blocked_address', blockedAddressMessage(host, range));
    return parsed;
  }
  let addresses: ReadonlyArray<{ address: string }>;
  try {
    addresses = await lookup(host);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new BlockedUrlError('unresolvable', `host ${host} could not be resolved (${code})`);
  }
  if (addresses.length === 0) throw new BlockedUrlError('unresolvable', `host ${host} has no addresses`);
  // ANY blocked address refuses the URL: the connection may use any of them.
  for (const { address } of addresses) {
    const range = blockedRange(address);
    if (range !== null) throw new BlockedUrlError('blocked_address', blockedAddressMessage(host, range));
  }
  return parsed;
}

/**
 * The error a guarded connection fails with; `code` is EBLOCKEDADDRESS. `address` null means the
 * host name itself is refused (a metadata name); the address never appears in the message.
 */
export function blockedAddressError(host: string, address: string | null, range: string): NodeJS.ErrnoException {
  const message = address === null ? blockedHostnameMessage(host) : blockedAddressMessage(host, range);
  const err: NodeJS.ErrnoException = new Error(message);
  err.code = BLOCKED_ADDRESS_CODE;
  return err;
}

type LookupAll = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

/**
 * A `lookup` for `net.connect` (the outbound layer's undici connector, dispatchers.ts) that
 * refuses blocked addresses at connect time (the DNS rebinding defence). Node ≥ 20 calls it with `{ all: true }` when it tries several
 * addresses (autoSelectFamily) and expects `(err, addresses[])`, otherwise `(err, address,
 * family)`; both shapes are served. Any blocked address fails the whole lookup, as at save time.
 *
 * Node skips `lookup` for IP literals, so callers must check literal hosts with isBlockedAddress.
 */
export function guardedLookup(allowPrivate: boolean, resolver: LookupAll = dns.lookup): net.LookupFunction {
  return (hostname, options, callback) => {
    const fail = (err: NodeJS.ErrnoException): void => callback(err, options.all === true ? [] : '');
    if (!allowPrivate && isBlockedHostname(hostname)) {
      fail(blockedAddressError(hostname, null, 'metadata'));
      return;
    }
    resolver(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) {
        fail(err);
        return;
      }
      if (!allowPrivate) {
        for (const { address } of addresses) {
          const range = blockedRange(address);
          if (range !== null) {
            fail(blockedAddressError(hostname, address, range));
            return;
          }
        }
      }
      if (options.all === true) {
        callback(null, addresses);
        return;
      }
      const first = addresses[0];
      if (first === undefined) {
        const empty: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        empty.code = 'ENOTFOUND';
        fail(empty);
        return;
      }
      callback(null, first.address, first.family);
    });
  };
}
