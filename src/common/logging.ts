import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { HeraldConfig } from '../config/config';

/**
 * Field names that may carry a secret anywhere in a logged object. pino's wildcard matches
 * one level, so each name is listed at the depths where our objects carry it.
 */
const SECRET_FIELDS = [
  'authorization',
  'cookie',
  'password',
  'appPassword',
  'accessToken',
  'refreshToken',
  'accessJwt',
  'refreshJwt',
  'secret',
  'apiKey',
  'key',
  'token',
  'credentials',
  'clientSecret',
];

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  ...SECRET_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`]),
];

export function loggerParams(config: Pick<HeraldConfig, 'logLevel'>): Params {
  return {
    pinoHttp: {
      level: config.logLevel,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      // Requests are logged by method and path only: headers and query strings (which may
      // hold an OAuth code or a key someone pasted in a URL) never reach the log.
      serializers: {
        req: (req: IncomingMessage & { id?: unknown }) => ({
          id: req.id,
          method: req.method,
          path: (req.url ?? '').split('?')[0],
        }),
        res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
      },
      autoLogging: {
        ignore: (req: IncomingMessage) => (req.url ?? '').startsWith('/health') || req.url === '/metrics',
      },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    },
  };
}
