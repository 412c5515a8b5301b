import { CanActivate, ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { AuthenticatedRequest, IS_PUBLIC } from '../access/auth-context';
import { permissionFor } from '../access/route-permissions';
import { allows, roleRefusal } from '../access/roles';
import { DomainError, ErrorCode, forbidden } from '../common/errors';
import { LoginThrottleService } from '../people/login-throttle.service';
import { bearerToken } from '../workspaces/api-key.util';
import { ApiKeysService } from '../workspaces/api-keys.service';

/**
 * Global guard: every route needs an API key unless marked @Public(), and the key's role must
 * allow what the route needs (src/access/route-permissions.ts, the one table of who may do what).
 * A route missing from that table is refused to every key: a new route is closed until someone
 * decides who may use it.
 * Wrong keys are slowed down per client like the page's logins, in the same count (LoginThrottleService).
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly logger = new Logger('ApiKeyGuard');

  constructor(
    private readonly reflector: Reflector,
    private readonly apiKeys: ApiKeysService,
    private readonly throttle: LoginThrottleService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<AuthenticatedRequest>();
    const res = http.getResponse<Response>();
    const authorization = req.headers.authorization;
    try {
      if (bearerToken(authorization) === null) {
        // No key at all is not a guess: refused, not counted.
        req.auth = await this.apiKeys.authenticate(authorization);
      } else {
        // A key: wrong ones count against the client, with the page's logins (people/login-throttle.ts).
        const client = (req.ip ?? req.socket.remoteAddress ?? 'unknown').slice(0, 100);
        // A key proves nothing about the wrong keys before it: it clears no count.
        // The key's read carries the client's count (one statement: LoginThrottleService's fast path).
        const outcome = await this.throttle.attempt({ keys: [client], clears: [], expensive: false }, new Date(), async (count) => {
          try {
            return { ok: true, value: await this.apiKeys.authenticate(authorization, count) };
          } catch (err) {
            if (err instanceof DomainError && err.code === ErrorCode.Unauthorized) return { ok: false, refusal: err };
            throw err;
          }
        });
        if (outcome.kind === 'throttled') {
          const seconds = Math.ceil(outcome.retryAfterMs / 1000);
          res.setHeader('Retry-After', String(seconds));
          throw new DomainError(
            ErrorCode.TooManyRequests,
            `Too many wrong API keys were tried from your address; wait ${seconds} second${seconds === 1 ? '' : 's'}, then try again.`,
          );
        }
        if (outcome.kind === 'refused') throw outcome.refusal;
        req.auth = outcome.value;
      }
    } catch (err) {
      if (err instanceof DomainError && err.code === ErrorCode.Unauthorized) res.setHeader('WWW-Authenticate', 'Bearer realm="herald"');
      throw err;
    }
    const route = (req.route as { path?: unknown } | undefined)?.path;
    const permission = typeof route === 'string' ? permissionFor(req.method, route) : undefined;
    if (!permission) {
      this.logger.error(`${req.method} ${String(route)} has no entry in src/access/route-permissions.ts: refused`);
      throw forbidden('This operation is not open to any API key yet (it has no entry in the role table).');
    }
    if (!allows(req.auth, permission)) {
      throw forbidden(roleRefusal(permission, req.auth.role));
    }
    return true;
  }
}
