import { permissionFor, ROUTE_PERMISSIONS } from './route-permissions';
import { PERMISSIONS } from './roles';

describe('the route permission table', () => {
  it('finds a route by method and Express path, HEAD as GET, a trailing slash as none', () => {
    expect(permissionFor('get', '/v1/accounts')).toBe('read');
    expect(permissionFor('POST', '/v1/accounts')).toBe('edit');
    expect(permissionFor('HEAD', '/v1/accounts/:id')).toBe('read');
    expect(permissionFor('GET', '/settings/accounts/')).toBe('read');
    expect(permissionFor('DELETE', '/v1/accounts/:id')).toBe('own');
  });

  it('refuses what it does not list (undefined: the guards answer 403)', () => {
    expect(permissionFor('GET', '/v1/nowhere')).toBeUndefined();
    expect(permissionFor('GET', '/v1/accounts/:accountId')).toBeUndefined();
    expect(permissionFor('GET', 'constructor')).toBeUndefined();
    expect(permissionFor('GET', '/')).toBeUndefined();
  });

  it('holds only known permissions, for /v1, /mcp, /settings and /review routes, the instance one for creating workspaces only', () => {
    for (const [key, p] of Object.entries(ROUTE_PERMISSIONS)) {
      expect(key).toMatch(/^(GET|POST|PUT|PATCH|DELETE) \/(v1\/|settings|mcp$|review\/)/);
      expect(PERMISSIONS).toContain(p);
    }
    expect(Object.entries(ROUTE_PERMISSIONS).filter(([, p]) => p === 'instance')).toEqual([['POST /v1/workspaces', 'instance']]);
    // Nothing of the API is public: every /v1 route needs a key.
    expect(Object.entries(ROUTE_PERMISSIONS).filter(([k, p]) => k.includes(' /v1/') && p === 'public')).toEqual([]);
  });
});
