import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { forbidden, unauthorized } from '../common/errors';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { metricsAccess, metricsTokenHash } from './metrics-access';

/** GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>`; without METRICS_TOKEN it is off. */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  private readonly expected: Buffer | null;

  constructor(@Inject(HERALD_CONFIG) config: HeraldConfig) {
    this.expected = metricsTokenHash(config.metrics.token);
  }

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const access = metricsAccess(this.expected, http.getRequest<Request>().headers.authorization);
    if (access === 'disabled') {
      throw forbidden('/metrics is off on this server: set METRICS_TOKEN and scrape with "Authorization: Bearer <token>"');
    }
    if (access === 'denied') {
      http.getResponse<Response>().setHeader('WWW-Authenticate', 'Bearer realm="herald-metrics"');
      throw unauthorized('/metrics needs "Authorization: Bearer <METRICS_TOKEN>"');
    }
    return true;
  }
}
