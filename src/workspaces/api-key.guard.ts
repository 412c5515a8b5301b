import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { forbidden } from '../common/errors';
import type { ApiKeyRole } from './api-key.entity';
import { ApiKeysService } from './api-keys.service';
import { AuthenticatedRequest, IS_PUBLIC, REQUIRED_ROLE } from './auth';

/** Global guard: every route needs an API key unless marked @Public(). */
@Injectable()
export class ApiKeyGuard implements CanActivate {
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
    const role = this.reflector.getAllAndOverride<ApiKeyRole | undefined>(REQUIRED_ROLE, targets);
    if (role === 'admin' && req.auth.role !== 'admin') {
      throw forbidden('Only the bootstrap API key (HERALD_API_KEY or the key printed at first start) may do this');
    }
    return true;
  }
}
