import { ConnectorInputError } from '../connector.interface';
import { MAX_HEADERS, parseCustomHeaders, parseWebhookInput, parseWebhookUrl, storedHeaders, storedUrl } from './webhook-config';

function inputError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConnectorInputError) return err.message;
    throw err;
  }
  throw new Error('expected a ConnectorInputError');
}

describe('parseWebhookUrl', () => {
  it.each(['https://blog.example.com/hooks/herald', 'http://blog.example.com:8080/x?y=1', 'https://[2001:db8::1]/'])(
    'accepts %s',
    (url) => {
      expect(parseWebhookUrl(url)).toBeInstanceOf(URL);
    },
  );

  it.each([
    [undefined, 'config.url must be an absolute http(s) URL (it is required)'],
    ['', 'config.url must be an absolute http(s) URL (it is required)'],
    [42, 'config.url must be an absolute http(s) URL (it is required)'],
    ['/relative', 'config.url must be an absolute http(s) URL'],
    ['blog.example.com/hook', 'config.url must be an absolute http(s) URL'],
    ['ftp://blog.example.com/', 'config.url must be an absolute http(s) URL'],
    ['mailto:me@example.com', 'config.url must be an absolute http(s) URL'],
  ])('rejects %p', (url, message) => {
    expect(inputError(() => parseWebhookUrl(url))).toBe(message);
  });

  it('rejects a URL longer than 2048 characters', () => {
    expect(inputError(() => parseWebhookUrl(`https://example.com/${'a'.repeat(2048)}`))).toBe('config.url must be at most 2048 characters');
  });

  it('rejects credentials in the URL without repeating them', () => {
    const message = inputError(() => parseWebhookUrl('https://admin:s3cr3t-pass@example.com/'));
    expect(message).toContain('config.url must not contain a user name or password');
    expect(message).not.toContain('s3cr3t-pass');
  });
});

describe('parseCustomHeaders', () => {
  it('accepts token names with string values, keeping their case', () => {
    expect(parseCustomHeaders({ Authorization: 'Bearer abc', 'X-Blog-Key': 'k1', "x!#$%&'*+-.^_`|~": '' })).toEqual({
      Authorization: 'Bearer abc',
      'X-Blog-Key': 'k1',
      "x!#$%&'*+-.^_`|~": '',
    });
  });

  it('treats null as "no custom headers"', () => {
    expect(parseCustomHeaders(null)).toEqual({});
  });

  it.each([
    'content-type',
    'Content-Type',
    'idempotency-key',
    'Idempotency-Key',
    'webhook-id',
    'webhook-timestamp',
    'Webhook-Signature',
    'user-agent',
    'Host',
    'content-length',
    'transfer-encoding',
    'connection',
  ])('refuses to let %s be overridden', (name) => {
    expect(inputError(() => parseCustomHeaders({ [name]: 'x' }))).toBe(
      `config.headers: ${JSON.stringify(name)} is set by Herald and cannot be overridden`,
    );
  });

  it.each(['', 'X Header', 'X-Header:', 'Ünïcode', 'a\nb', '(x)', 'a/b'])('refuses the invalid name %p', (name) => {
    expect(inputError(() => parseCustomHeaders({ [name]: 'x' }))).toContain('is not a valid header name');
  });

  it('refuses the same name twice in different case', () => {
    expect(inputError(() => parseCustomHeaders({ 'X-Key': 'a', 'x-key': 'b' }))).toBe(
      'config.headers: "x-key" is given twice (header names are case-insensitive)',
    );
  });

  it.each([[42], [null], [true], [['a']], [{ nested: 1 }]])('refuses the non-string value %p', (value) => {
    expect(inputError(() => parseCustomHeaders({ 'X-Key': value }))).toBe('config.headers["X-Key"] must be a string');
  });

  it.each(['line\r\nInjected: yes', 'nul\u0000', 'emoji 😀', 'bell\u0007'])(
    'refuses a value Node could not send (%p) without repeating it',
    (value) => {
      const message = inputError(() => parseCustomHeaders({ 'X-Key': value }));
      expect(message).toContain('config.headers["X-Key"] contains characters not allowed');
      expect(message).not.toContain(value);
    },
  );

  it(`refuses more than ${MAX_HEADERS} headers`, () => {
    const headers = Object.fromEntries(Array.from({ length: MAX_HEADERS + 1 }, (_, i) => [`X-H${i}`, 'v']));
    expect(inputError(() => parseCustomHeaders(headers))).toBe('config.headers may hold at most 20 headers, got 21');
    expect(Object.keys(parseCustomHeaders(Object.fromEntries(Object.entries(headers).slice(0, MAX_HEADERS))))).toHaveLength(MAX_HEADERS);
  });

  it.each([['a string'], [['X-Key', 'v']], [42]])('refuses %p instead of an object', (headers) => {
    expect(inputError(() => parseCustomHeaders(headers))).toBe('config.headers must be an object of header names to string values');
  });

  it('keeps a header named __proto__ as an ordinary header', () => {
    const headers = parseCustomHeaders(JSON.parse('{"__proto__": "v"}'));
    expect(Object.keys(headers)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(headers)).toBe(Object.prototype);
  });
});

describe('parseWebhookInput', () => {
  it('returns the canonical URL and the headers', () => {
    expect(parseWebhookInput({ url: 'HTTPS://Blog.Example.com/hook', headers: { 'X-Key': 'v' } })).toEqual({
      url: 'https://blog.example.com/hook',
      headers: { 'X-Key': 'v' },
    });
  });

  it('tells a missing headers field apart from an empty one', () => {
    expect(parseWebhookInput({ url: 'https://example.com/' }).headers).toBeUndefined();
    expect(parseWebhookInput({ url: 'https://example.com/', headers: {} }).headers).toEqual({});
  });

  it('names the unknown fields', () => {
    expect(inputError(() => parseWebhookInput({ url: 'https://example.com/', secret: 'x', method: 'PUT' }))).toBe(
      'config has unknown field(s) "secret", "method"; a webhook accepts url and headers',
    );
  });

  it.each([[null], ['https://example.com/'], [[]], [undefined]])('refuses %p as config', (input) => {
    expect(inputError(() => parseWebhookInput(input))).toBe('config must be an object with url and optional headers');
  });
});

describe('stored values', () => {
  it('reads stored headers leniently', () => {
    expect(storedHeaders({ a: 'x', b: 1 })).toEqual({ a: 'x' });
    expect(storedHeaders(undefined)).toEqual({});
  });

  it('reads a stored URL or reports none', () => {
    expect(storedUrl({ url: 'https://example.com/h' })?.href).toBe('https://example.com/h');
    expect(storedUrl({ url: 'ftp://example.com/' })).toBeNull();
    expect(storedUrl({ url: 'nonsense' })).toBeNull();
    expect(storedUrl({})).toBeNull();
  });
});
