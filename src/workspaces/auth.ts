import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import type { Request } from 'express';
import type { ApiKeyRole } from './api-key.entity';

/** Who is calling: resolved from the API key by the guard, trusted by everything after it. */
export interface AuthContext {
  workspaceId: string;
  apiKeyId: string;
  role: ApiKeyRole;
}

export type AuthenticatedRequest = Request & { auth?: AuthContext };

export const IS_PUBLIC = 'herald:public';
/**
 * Routes outside /v1 (health, metrics, docs, the page's own login) need no API key. The OpenAPI
 * document says so too (an empty security requirement), from this one marker.
 */
export const Public = () => applyDecorators(SetMetadata(IS_PUBLIC, true), ApiSecurity({}));

export const REQUIRED_ROLE = 'herald:role';
export const RequireRole = (role: ApiKeyRole) => SetMetadata(REQUIRED_ROLE, role);

export const Auth = createParamDecorator((_: unknown, ctx: ExecutionContext): AuthContext => {
  const req = ctx.switchToHttp().getRequest<AuthenticatedRequest>();
  if (!req.auth) throw new Error('Auth() used on a route without the API key guard');
  return req.auth;
});
