import type * as dns from 'node:dns';
import * as net from 'node:net';
import {
  assertPublicUrl,
  BLOCKED_ADDRESS_CODE,
  BlockedUrlError,
  blockedRange,
  guardedLookup,
  isBlockedAddress,
  isBlockedHostname,
  ResolveAll,
} from './ssrf-guard';

describe('isBlockedAddress', () => {
  it.each([
    // IPv4 loopback, private, link-local and metadata
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '192.168.255.255',
    '169.254.169.254',
    '169.254.170.2',
    '169.254.0.1',
    // unspecified, CGNAT (and Alibaba's metadata address in it), broadcast, multicast
    '0.0.0.0',
    '0.1.2.3',
    '100.64.0.1',
    '100.127.255.255',
    '100.100.100.200',
    '255.255.255.255',
    '224.0.0.1',
    '239.255.255.250',
    // reserved, documentation and benchmarking ranges, Oracle's metadata address
    '240.0.0.1',
    '192.0.2.1',
    '198.51.100.7',
    '203.0.113.9',
    '198.18.0.1',
    '192.0.0.192',
    '192.88.99.1',
  ])('blocks the IPv4 address %s', (ip) => {
    expect(isBlockedAddress(ip)).toBe(true);
  });

  it.each([
    '::1',
    '::',
    'fe80::1',
    'fe80::1%eth0',
    'febf:ffff::1',
    'fc00::1',
    'fd12:3456::1',
    'fd00:ec2::254',
    'ff02::1',
    'fec0::1',
    '2001:db8::1',
    '100::1',
    '[::1]',
  ])('blocks the IPv6 address %s', (ip) => {
    expect(isBlockedAddress(ip)).toBe(true);
  });

  it.each([
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:0:7f00:1', 'rfc6145'],
    ['::7f00:1', 'ipv4Compatible'],
    ['::808:808', 'ipv4Compatible'],
    // ipaddr.js reads the dotted form as IPv4-mapped; either way it is the loopback it reaches.
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2002:7f00:1::1', '6to4'],
    ['2001::1', 'teredo'],
  ])('blocks %s, which embeds an IPv4 address (%s)', (ip, range) => {
    expect(blockedRange(ip)).toBe(range);
  });

  it.each(['not-an-ip', '', '1.2.3.4.5', '999.1.1.1', 'example.com', '::g'])('fails closed on %p, which is not an IP address', (ip) => {
    expect(isBlockedAddress(ip)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '11.0.0.1',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.255.255',
    '169.255.0.1',
    '192.169.0.1',
    '223.255.255.254',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '2a00:1450:4001::1',
    '::ffff:8.8.8.8',
  ])('lets the public address %s through', (ip) => {
    expect(isBlockedAddress(ip)).toBe(false);
  });
});

describe('isBlockedHostname', () => {
  it.each([
    'metadata',
    'metadata.google.internal',
    'METADATA.Google.Internal',
    'metadata.google.internal.',
    'metadata.goog',
    'instance-data',
  ])('blocks the metadata hostname %s', (host) => {
    expect(isBlockedHostname(host)).toBe(true);
  });

  it.each(['example.com', 'metadata.example.com', 'mymetadata', 'blog.internal'])('allows %s', (host) => {
    expect(isBlockedHostname(host)).toBe(false);
  });
});

function fixedLookup(addresses: string[]): jest.Mock<ReturnType<ResolveAll>, Parameters<ResolveAll>> {
  return jest.fn((_hostname: string) => Promise.resolve(addresses.map((address) => ({ address, family: net.isIP(address) }))));
}

async function refusal(promise: Promise<unknown>): Promise<BlockedUrlError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof BlockedUrlError) return err;
    throw err;
  }
  throw new Error('expected a BlockedUrlError');
}

describe('assertPublicUrl', () => {
  it('accepts an https URL whose host resolves to public addresses only', async () => {
    const lookup = fixedLookup(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']);
    const url = await assertPublicUrl('https://blog.example.com/hooks/herald?x=1', false, lookup);
    expect(url.hostname).toBe('blog.example.com');
    expect(lookup).toHaveBeenCalledWith('blog.example.com');
  });

  it('refuses a host when ANY of its addresses is private, naming the setting that allows it', async () => {
    const err = await refusal(assertPublicUrl('https://blog.example.com/', false, fixedLookup(['93.184.216.34', '10.0.0.5'])));
    expect(err.reason).toBe('blocked_address');
    expect(err.message).toBe(
      'blog.example.com resolves to a private address; set HERALD_ALLOW_PRIVATE_URLS=true to allow private destinations',
    );
  });

  it.each([
    ['10.0.3.7', 'a private address'],
    ['127.0.0.1', 'a loopback address'],
    ['169.254.169.254', 'a cloud metadata address'],
    ['fd12:3456::1', 'a unique-local address'],
    ['100.64.0.9', 'a carrier-grade NAT address'],
  ])('says what kind of address a name resolves to (%s), never which: that is a map of the private network', async (address, kind) => {
    const err = await refusal(assertPublicUrl('https://intranet.example.com/', false, fixedLookup([address])));
    expect(err.message).toContain(`intranet.example.com resolves to ${kind}`);
    expect(err.message).not.toContain(address);
  });

  it.each([
    ['http://127.0.0.1:8080/hook', 'loopback'],
    ['http://[::1]/hook', 'loopback'],
    ['http://0x7f.1/', 'loopback'],
    ['http://2130706433/', 'loopback'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://169.254.169.254/latest/meta-data/', 'cloud metadata'],
    ['http://192.168.1.10/', 'private'],
  ])('refuses the literal address in %s without asking DNS', async (url, label) => {
    const lookup = fixedLookup([]);
    const err = await refusal(assertPublicUrl(url, false, lookup));
    expect(err.reason).toBe('blocked_address');
    expect(err.message).toContain(label);
    expect(lookup).not.toHaveBeenCalled();
  });

  it.each(['http://metadata.google.internal/computeMetadata/v1/', 'http://METADATA/', 'http://metadata.google.internal./'])(
    'refuses the metadata hostname in %s by name',
    async (url) => {
      const err = await refusal(assertPublicUrl(url, false, fixedLookup(['8.8.8.8'])));
      expect(err.reason).toBe('blocked_hostname');
      expect(err.message).toContain('HERALD_ALLOW_PRIVATE_URLS=true');
    },
  );

  it.each([
    ['ftp://example.com/', 'unsupported_protocol'],
    ['file:///etc/passwd', 'unsupported_protocol'],
    ['javascript:alert(1)', 'unsupported_protocol'],
    ['not a url', 'invalid_url'],
    ['/relative/path', 'invalid_url'],
    ['https://user:pass@example.com/', 'credentials_in_url'],
    ['https://token@example.com/', 'credentials_in_url'],
  ])('refuses %s (%s), even when private URLs are allowed', async (url, reason) => {
    const err = await refusal(assertPublicUrl(url, true, fixedLookup(['8.8.8.8'])));
    expect(err.reason).toBe(reason);
  });

  it('never repeats the password of a URL with credentials', async () => {
    const err = await refusal(assertPublicUrl('https://admin:hunter2secret@example.com/', false));
    expect(err.message).not.toContain('hunter2secret');
  });

  it('refuses a host that does not resolve, with the resolver code', async () => {
    const lookup: ResolveAll = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND nope.invalid'), { code: 'ENOTFOUND' }));
    const err = await refusal(assertPublicUrl('https://nope.invalid/', false, lookup));
    expect(err.reason).toBe('unresolvable');
    expect(err.message).toContain('ENOTFOUND');
  });

  it('allows private destinations without resolving when HERALD_ALLOW_PRIVATE_URLS is on', async () => {
    const lookup = fixedLookup(['127.0.0.1']);
    await expect(assertPublicUrl('http://127.0.0.1:3000/hook', true, lookup)).resolves.toBeInstanceOf(URL);
    await expect(assertPublicUrl('http://localhost:3000/hook', true, lookup)).resolves.toBeInstanceOf(URL);
    expect(lookup).not.toHaveBeenCalled();
  });
});

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

function callLookup(
  lookup: net.LookupFunction,
  hostname: string,
  options: dns.LookupOptions,
): Promise<{ err: NodeJS.ErrnoException | null; address: string | dns.LookupAddress[]; family?: number }> {
  return new Promise((resolve) => {
    const callback: LookupCallback = (err, address, family) => resolve({ err, address, family });
    lookup(hostname, options, callback);
  });
}

function fakeResolver(addresses: dns.LookupAddress[] | NodeJS.ErrnoException) {
  return jest.fn(
    (
      _hostname: string,
      _options: dns.LookupAllOptions,
      callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
    ) => {
      if (addresses instanceof Error) setImmediate(() => callback(addresses, []));
      else setImmediate(() => callback(null, addresses));
    },
  );
}

describe('guardedLookup', () => {
  const publicAddresses: dns.LookupAddress[] = [
    { address: '93.184.216.34', family: 4 },
    { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
  ];

  it('answers the { all: true } shape Node 20 uses with every address', async () => {
    const resolver = fakeResolver(publicAddresses);
    const result = await callLookup(guardedLookup(false, resolver), 'blog.example.com', { all: true, family: 0 });
    expect(result.err).toBeNull();
    expect(result.address).toEqual(publicAddresses);
  });

  it('answers the single-address shape with (address, family)', async () => {
    const resolver = fakeResolver(publicAddresses);
    const result = await callLookup(guardedLookup(false, resolver), 'blog.example.com', { family: 4 });
    expect(result).toEqual({ err: null, address: '93.184.216.34', family: 4 });
    expect(resolver.mock.calls[0][1]).toEqual({ family: 4, all: true });
  });

  it.each([{ all: true }, {}])('fails the connection with EBLOCKEDADDRESS when an address is private (%p)', async (options) => {
    const resolver = fakeResolver([
      { address: '93.184.216.34', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ]);
    const result = await callLookup(guardedLookup(false, resolver), 'rebound.example.com', options);
    expect(result.err?.code).toBe(BLOCKED_ADDRESS_CODE);
    expect(result.err?.message).toBe(
      'rebound.example.com resolves to a loopback address; set HERALD_ALLOW_PRIVATE_URLS=true to allow private destinations',
    );
    expect(result.err?.message).not.toContain('127.0.0.1');
  });

  it('refuses a metadata hostname without resolving it', async () => {
    const resolver = fakeResolver(publicAddresses);
    const result = await callLookup(guardedLookup(false, resolver), 'metadata.google.internal', { all: true });
    expect(result.err?.code).toBe(BLOCKED_ADDRESS_CODE);
    expect(resolver).not.toHaveBeenCalled();
  });

  it('passes resolver errors through unchanged', async () => {
    const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND x.invalid'), { code: 'ENOTFOUND' });
    const result = await callLookup(guardedLookup(false, fakeResolver(notFound)), 'x.invalid', { all: true });
    expect(result.err).toBe(notFound);
  });

  it('lets private addresses through when allowed', async () => {
    const resolver = fakeResolver([{ address: '10.1.2.3', family: 4 }]);
    const result = await callLookup(guardedLookup(true, resolver), 'intranet.local', {});
    expect(result).toEqual({ err: null, address: '10.1.2.3', family: 4 });
  });

  it('stops a real connection to localhost at connect time', async () => {
    const server = net.createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const outcome = await new Promise<string>((resolve) => {
        const socket = net.connect({ host: 'localhost', port, lookup: guardedLookup(false) });
        socket.on('connect', () => {
          socket.destroy();
          resolve('connected');
        });
        socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
      });
      expect(outcome).toBe(BLOCKED_ADDRESS_CODE);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
