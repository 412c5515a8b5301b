import { crossSiteProblem, originOf } from './same-origin';

describe('crossSiteProblem', () => {
  const own = ['https://herald.example.com', 'http://127.0.0.1:3000'];

  it('accepts our own forms, and clients that send neither header', () => {
    expect(crossSiteProblem({ origin: 'https://herald.example.com', secFetchSite: 'same-origin' }, own)).toBeNull();
    expect(crossSiteProblem({ origin: 'http://127.0.0.1:3000' }, own)).toBeNull();
    expect(crossSiteProblem({}, own)).toBeNull();
    expect(crossSiteProblem({ secFetchSite: 'none' }, own)).toBeNull();
    // What a browser sends for our own forms under Referrer-Policy: no-referrer.
    expect(crossSiteProblem({ origin: 'null', secFetchSite: 'same-origin' }, own)).toBeNull();
    expect(crossSiteProblem({ origin: 'null', secFetchSite: 'cross-site' }, own)).toBe('Sec-Fetch-Site: cross-site');
  });

  it('refuses a form from another site or origin, whichever header says so', () => {
    expect(crossSiteProblem({ secFetchSite: 'cross-site' }, own)).toBe('Sec-Fetch-Site: cross-site');
    expect(crossSiteProblem({ secFetchSite: 'same-site', origin: 'https://blog.example.com' }, own)).toBe('Sec-Fetch-Site: same-site');
    expect(crossSiteProblem({ origin: 'https://evil.example' }, own)).toBe('Origin: https://evil.example');
    expect(crossSiteProblem({ origin: 'https://herald.example.com:8443' }, own)).toBe('Origin: https://herald.example.com:8443');
  });

  it('reads origins of URLs', () => {
    expect(originOf('https://Herald.Example.com/settings')).toBe('https://herald.example.com');
    expect(originOf('not a url')).toBeNull();
  });
});
