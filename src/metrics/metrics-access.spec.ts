import fc from 'fast-check';
import { metricsAccess, metricsTokenHash } from './metrics-access';

describe('metricsAccess', () => {
  const token = 'scrape-token-0123456789abcdef';
  const expected = metricsTokenHash(token);

  it('is off for everyone when no token is configured', () => {
    expect(metricsAccess(null, undefined)).toBe('disabled');
    expect(metricsAccess(null, `Bearer ${token}`)).toBe('disabled');
  });

  it("lets the configured bearer token in, whatever the scheme's case", () => {
    expect(metricsAccess(expected, `Bearer ${token}`)).toBe('allowed');
    expect(metricsAccess(expected, `bearer ${token}`)).toBe('allowed');
  });

  it('refuses no header, another scheme, a prefix or an extension of the token', () => {
    expect(metricsAccess(expected, undefined)).toBe('denied');
    expect(metricsAccess(expected, `Basic ${token}`)).toBe('denied');
    expect(metricsAccess(expected, `Bearer ${token.slice(0, -1)}`)).toBe('denied');
    expect(metricsAccess(expected, `Bearer ${token}x`)).toBe('denied');
  });

  it('refuses every other header value', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (header) => {
        fc.pre(header.replace(/^Bearer +/i, '').trim() !== token);
        expect(metricsAccess(expected, header)).toBe('denied');
      }),
      { numRuns: 500 },
    );
  });
});
