import * as ipaddr from 'ipaddr.js';

/**
 * The checks of TRUST_PROXY's list of proxies (pure): every entry is a name Express knows, an
 * address or a CIDR range that Express's proxy-addr compiles, no range is wider than a network of
 * proxies can be, and the ranges together leave some clients out.
 *
 * Why bounds at all: a trusted peer's X-Forwarded-For is believed, so trusting "everyone" lets any
 * client pick a new address for every wrong key and escape the slow-down. `true` was refused from
 * the start; `0.0.0.0/1,128.0.0.0/1` says the same in two halves, and `0.0.0.0/0` made Express
 * throw a TypeError at start instead of a message naming the variable.
 *
 * The bounds, from what real proxies need:
 * - IPv4: at most /8 wide. The widest private network is 10.0.0.0/8; CDNs publish ranges of /13
 *   to /22 (Cloudflare's widest IPv4 range is 104.16.0.0/13).
 * - IPv6: at most /16 wide (CDNs publish /29 to /32, e.g. 2a06:98c0::/29), except inside the
 *   private blocks that `uniquelocal` and `linklocal` name (fc00::/7, fe80::/10), which may be
 *   named whole.
 * - An IPv4-mapped IPv6 range (`::ffff:0:0/96`) is the IPv4 range it maps: proxy-addr matches IPv4
 *   clients with it.
 */

/** The names Express (proxy-addr) expands, with its ranges (node_modules/proxy-addr IP_RANGES). */
const NAMED_RANGES: Record<string, string[]> = {
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  loopback: ['127.0.0.1/8', '::1/128'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};
export const PROXY_NAMES = Object.keys(NAMED_RANGES);

export const MIN_IPV4_PREFIX = 8;
export const MIN_IPV6_PREFIX = 16;
/** Private IPv6 blocks that may be trusted whole, though wider than MIN_IPV6_PREFIX. */
const PRIVATE_IPV6: [ipaddr.IPv6, number][] = [ipaddr.IPv6.parseCIDR('fc00::/7'), ipaddr.IPv6.parseCIDR('fe80::/10')];

type Family = 4 | 6;
const BITS: Record<Family, number> = { 4: 32, 6: 128 };

interface Range {
  family: Family;
  first: bigint;
  last: bigint;
}

const int = (n: bigint) => n.toLocaleString('en-US');
const EVERYONE = "that would believe any client's X-Forwarded-For; name only the proxies";

function toBigInt(bytes: number[]): bigint {
  return bytes.reduce((acc, b) => (acc << 8n) | BigInt(b), 0n);
}

function rangeOf(address: ipaddr.IPv4 | ipaddr.IPv6, prefix: number): Range {
  const family: Family = address.kind() === 'ipv4' ? 4 : 6;
  const hostBits = BigInt(BITS[family] - prefix);
  const first = (toBigInt(address.toByteArray()) >> hostBits) << hostBits;
  return { family, first, last: first + (1n << hostBits) - 1n };
}

/** One entry read as proxy-addr reads it; a problem (a sentence after `has "entry"`) or its range. */
function readEntry(entry: string): { range: Range } | { problem: string } | { malformed: true } {
  const parts = entry.split('/');
  if (parts.length > 2) return { malformed: true };
  const [text, bits] = parts;
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  // Four-part decimal only: proxy-addr's older ipaddr.js reads 010.0.0.1 as octal (8.0.0.1).
  if (text.includes(':')) {
    if (text.includes('%') || !ipaddr.IPv6.isValid(text)) return { malformed: true };
    address = ipaddr.IPv6.parse(text);
  } else {
    if (!ipaddr.IPv4.isValidFourPartDecimal(text)) return { malformed: true };
    address = ipaddr.IPv4.parse(text);
  }
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) return { malformed: true };
  const max = BITS[address.kind() === 'ipv4' ? 4 : 6];
  let prefix = bits === undefined ? max : Number(bits);
  if (prefix > max) return { problem: `: an ${address.kind() === 'ipv4' ? 'IPv4' : 'IPv6'} prefix is /1 to /${max}` };
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && (bits === undefined || prefix >= 96)) {
    address = (address as ipaddr.IPv6).toIPv4Address();
    prefix = bits === undefined ? 32 : prefix - 96;
  }
  const range = rangeOf(address, prefix);
  if (prefix === 0) return { problem: `, every ${range.family === 4 ? 'IPv4' : 'IPv6'} address: ${EVERYONE}` };
  const count = range.last - range.first + 1n;
  if (range.family === 4 && prefix < MIN_IPV4_PREFIX) {
    return {
      problem: ` (${int(count)} addresses): IPv4 ranges may be at most /${MIN_IPV4_PREFIX} wide (a proxy's address, or its network such as 10.0.0.0/8)`,
    };
  }
  if (range.family === 6 && prefix < MIN_IPV6_PREFIX && !PRIVATE_IPV6.some((p) => (address as ipaddr.IPv6).match(p) && prefix >= p[1])) {
    return {
      problem: ` (a /${prefix}): IPv6 ranges may be at most /${MIN_IPV6_PREFIX} wide (a proxy's address, or its network such as 2001:db8::/32), or within fc00::/7 or fe80::/10`,
    };
  }
  return { range };
}

/** The families whose every address the ranges cover together (merged in order, as intervals). */
function coveredFamilies(ranges: Range[]): Family[] {
  const out: Family[] = [];
  for (const family of [4, 6] as const) {
    const sorted = ranges.filter((r) => r.family === family).sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
    let next = 0n; // the first address not covered yet
    for (const r of sorted) {
      if (r.first > next) break;
      if (r.last + 1n > next) next = r.last + 1n;
    }
    if (next === 1n << BigInt(BITS[family])) out.push(family);
  }
  return out;
}

/**
 * Why TRUST_PROXY's entries (names lower-cased) cannot be used, as the end of a sentence that
 * starts with the variable's name; `malformed` when an entry is none of the accepted forms (the
 * caller says which forms are); null when they can.
 */
export function trustedProxiesProblem(entries: string[]): { malformed: string } | { problem: string } | null {
  const ranges: Range[] = [];
  for (const entry of entries) {
    const named = NAMED_RANGES[entry];
    if (named) {
      for (const cidr of named) ranges.push(rangeOf(...ipaddr.parseCIDR(cidr)));
      continue;
    }
    const read = readEntry(entry);
    if ('malformed' in read) return { malformed: entry };
    if ('problem' in read) return { problem: `has "${entry}"${read.problem}` };
    ranges.push(read.range);
  }
  const covered = coveredFamilies(ranges);
  if (covered.length > 0) {
    return {
      problem: `has ranges that together cover every ${covered.map((f) => `IPv${f}`).join(' and every ')} address: ${EVERYONE}`,
    };
  }
  return null;
}
