import fc from 'fast-check';
import { deadSince, fields, formatUtc, looksLikeAppPassword, safeNextPath } from './page-input';

describe('safeNextPath', () => {
  it('keeps a path of the page, query included', () => {
    expect(safeNextPath('/settings/failed-posts/0b7c6a52-1a0e-4a4e-9d43-7b8f0f3f7a10')).toBe(
      '/settings/failed-posts/0b7c6a52-1a0e-4a4e-9d43-7b8f0f3f7a10',
    );
    expect(safeNextPath('/settings/failed-posts?provider=bluesky&within=7d')).toBe('/settings/failed-posts?provider=bluesky&within=7d');
  });

  it.each([
    'https://evil.example/settings',
    '//evil.example/settings',
    '/settings//evil.example',
    '/settings/../v1/accounts',
    '/settings\\@evil.example',
    '/v1/accounts',
    '/settings/login',
    'javascript:alert(1)',
    '/settings/accounts\r\nLocation: https://evil.example',
  ])('refuses %s', (value) => {
    expect(safeNextPath(value)).toBe('/settings/accounts');
  });

  it('only ever answers a path under /settings with no host', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const p = safeNextPath(s);
        return p.startsWith('/settings') && !p.includes('//') && !p.includes('\\') && !/[\s]/.test(p);
      }),
    );
  });
});

describe('looksLikeAppPassword', () => {
  it('accepts the xxxx-xxxx-xxxx-xxxx shape, surrounding spaces ignored', () => {
    expect(looksLikeAppPassword('abcd-2345-efgh-6789')).toBe(true);
    expect(looksLikeAppPassword(' abcd-2345-efgh-6789 ')).toBe(true);
  });
  it('refuses what looks like a main password', () => {
    for (const p of ['hunter2', 'correct horse battery staple', 'abcd-2345-efgh', 'abcd_2345_efgh_6789', 'abcd-2345-efgh-6789-ijkl']) {
      expect(looksLikeAppPassword(p)).toBe(false);
    }
  });
});

describe('form helpers', () => {
  it('reads checkboxes sent once or many times', () => {
    expect(fields({ ids: 'a' }, 'ids')).toEqual(['a']);
    expect(fields({ ids: ['a', 'b'] }, 'ids')).toEqual(['a', 'b']);
    expect(fields({}, 'ids')).toEqual([]);
  });
  it('prints UTC times to the minute', () => {
    expect(formatUtc('2026-12-01T14:32:59.123Z')).toBe('2026-12-01 14:32 UTC');
    expect(formatUtc(null)).toBe('');
  });
  it('turns the "dead within" choice into a lower bound', () => {
    const now = new Date('2026-12-08T00:00:00Z');
    expect(deadSince('7d', now)).toBe('2026-12-01T00:00:00.000Z');
    expect(deadSince('forever', now)).toBeUndefined();
  });
});
