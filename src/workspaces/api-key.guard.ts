import { CanActivate, ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { AuthenticatedRequest, IS_PUBLIC } from '../access/auth-context';
import { permissionFor } from '../access/route-permissions';
import { allows, whoMay } from '../access/roles';
import { forbidden } from '../common/errors';
import { ApiKeysService } from './api-keys.service';

/**
 * Global guard: every route needs an API key unless marked @Public(), and the key's role must
 * allow what the route needs (src/access/route-permissions.ts, the one table of who may do what).
 * A route missing from that table is refused to every key: a new route is closed until someone
 * decides who may use it.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly logger = new Logger('ApiKeyGuard');

  constructor(
    private readonly reflector: Reflector,
    private readonly apiKeys: ApiKeysService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<AuthenticatedRequest>();
    try {
      req.auth = await this.apiKeys.authenticate(req.headers.authorization);
    } catch (err) {
      http.getResponse<Response>().setHeader('WWW-Authenticate', 'Bearer realm="herald"');
      throw err;
    }
    const route = (req.route as { path?: unknown } | undefined)?.path;
    const permission = typeof route === 'string' ? permissionFor(req.method, route) : undefined;
    if (!permission) {
      this.logger.error(`${req.method} ${String(route)} has no entry in src/access/route-permissions.ts: refused`);
      throw forbidden('This operation is not open to any API key yet (it has no entry in the role table).');
    }
    if (!allows(req.auth, permission)) {
      throw forbidden(`Only ${whoMay(permission)} may do this; this API key's role is ${req.auth.role}. Nothing was changed.`);
    }
    return true;
  }
}
