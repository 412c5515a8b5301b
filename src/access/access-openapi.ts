import type { OpenAPIObject } from '@nestjs/swagger';
import { permissionFor } from './route-permissions';
import { whoMay } from './roles';

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

/**
 * States the role table on every /v1 operation of the OpenAPI document: who may call it (in its
 * description and as `x-herald-permission`), and the 403 a key of a lower role gets. Written
 * from route-permissions.ts, so the document cannot disagree with the guards.
 */
export function documentPermissions(document: OpenAPIObject, errorSchemaRef = '#/components/schemas/Error'): OpenAPIObject {
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith('/v1/')) continue;
    const expressPath = path.replace(/\{([^}]+)\}/g, ':$1');
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      // A route missing from the table is refused to every key by the guard; say so here too
      // (test/roles.test.ts fails on it by name).
      const permission = permissionFor(method, expressPath) ?? 'none';
      const rule = `**Who may:** ${permission === 'none' ? 'nobody yet (no entry in the role table)' : whoMay(permission)}.`;
      op.description = op.description ? `${op.description}\n\n${rule}` : rule;
      (op as unknown as Record<string, unknown>)['x-herald-permission'] = permission;
      if (permission !== 'read' && permission !== 'public' && !op.responses['403']) {
        op.responses['403'] = {
          description: `The API key's role does not allow this: it needs ${permission === 'none' ? 'an entry in the role table' : whoMay(permission)}. Nothing was changed.`,
          content: { 'application/json': { schema: { $ref: errorSchemaRef } } },
        };
      }
    }
  }
  return document;
}
