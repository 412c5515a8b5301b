import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { MetricsService } from './metrics.service';

/**
 * Counts requests by route *pattern* (`/v1/posts/:id`), never by raw path, so ids do not
 * explode the label set. Requests that matched no route are labelled "unmatched".
 */
@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  constructor(private readonly metrics: MetricsService) {}

  use(req: Request, res: Response, next: NextFunction): void {
    const start = process.hrtime.bigint();
    this.metrics.workStarted();
    res.on('finish', () => {
      const routePath = (req.route as { path?: string } | undefined)?.path;
      const route = routePath ? `${req.baseUrl ?? ''}${routePath}` : 'unmatched';
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      this.metrics.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
      this.metrics.httpDuration.observe({ method: req.method, route }, seconds);
    });
    next();
  }
}
