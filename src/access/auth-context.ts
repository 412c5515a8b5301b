import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import type { Request } from 'express';
import type { Caller, Role } from './roles';

/** Who acts: an API key (the API, or the page logged in with a key) or a person (the page). */
export type Principal = { kind: 'key'; id: string } | { kind: 'person'; id: string };

/**
 * Who is calling: resolved by the API-key guard or the page's session guard, trusted by
 * everything after it. `label` names the principal for the audit trail as it was then
 * ("Ada Lovelace <ada@example.com>", "key “CI” (hk_3fZk)").
 */
export interface AuthContext extends Caller {
  workspaceId: string;
  role: Role;
  /** The operator's bootstrap key: instance-wide rights (creating workspaces). */
  bootstrap: boolean;
  principal: Principal;
  label: string;
}

export type AuthenticatedRequest = Request & { auth?: AuthContext };

export const IS_PUBLIC = 'herald:public';
/**
 * Routes outside /v1 (health, metrics, docs, the page, which has its own session guard) need no
 * API key. The OpenAPI document says so too (an empty security requirement), from this one marker.
 */
export const Public = () => applyDecorators(SetMetadata(IS_PUBLIC, true), ApiSecurity({}));

export const Auth = createParamDecorator((_: unknown, ctx: ExecutionContext): AuthContext => {
  const req = ctx.switchToHttp().getRequest<AuthenticatedRequest>();
  if (!req.auth) throw new Error('Auth() used on a route without the API key guard');
  return req.auth;
});
