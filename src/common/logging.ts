import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { Options as HttpLoggerOptions } from 'pino-http';
import type PinoPretty from 'pino-pretty';
import type { HeraldConfig } from '../config/config';

export type LogFormat = 'json' | 'pretty';

/**
 * LOG_FORMAT `auto` (the default) means readable lines for a person at a terminal and JSON
 * lines for everything else (a pipe, a file, a log collector), where one object per line is
 * what the next program expects.
 */
export function chooseLogFormat(setting: HeraldConfig['logFormat'], stdoutIsTTY: boolean): LogFormat {
  if (setting === 'auto') return stdoutIsTTY ? 'pretty' : 'json';
  return setting;
}

interface LogLine {
  msg?: unknown;
  context?: unknown;
  req?: { method?: unknown; path?: unknown };
  res?: { statusCode?: unknown };
  responseTime?: unknown;
}

/** One readable line per event: "POST /v1/posts 201 12 ms", "[Worker] started". */
export function prettyMessage(log: LogLine): string {
  if (log.req && log.res) {
    const time = typeof log.responseTime === 'number' ? ` ${Math.round(log.responseTime)} ms` : '';
    return `${String(log.req.method)} ${String(log.req.path)} ${String(log.res.statusCode)}${time}`;
  }
  const context = typeof log.context === 'string' && log.context ? `[${log.context}] ` : '';
  const msg = log.msg === undefined ? '' : typeof log.msg === 'string' ? log.msg : JSON.stringify(log.msg);
  return `${context}${msg}`;
}

/**
 * pino-pretty in the process itself (not a worker-thread transport), writing synchronously:
 * lines are not lost at exit and the order with the start-up banner holds. Redaction happens
 * before the line reaches it, as for JSON. Loaded only for this format: a service logging JSON
 * (a pipe, a container) never needs it.
 */
function prettyStream(): PinoPretty.PrettyStream {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { default: pretty } = require('pino-pretty') as { default: typeof PinoPretty };
  // Colours only when the output is a terminal that shows them (pino-pretty checks).
  return pretty({
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,context,req,res,responseTime',
    messageFormat: (log) => prettyMessage(log),
    singleLine: true,
  });
}

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

/**
 * Nest's start-up chatter (a line per module and per route, ~60 lines) says nothing an operator
 * acts on: it is logged at debug, not info. "Nest application successfully started" stays.
 */
const NEST_BOOT_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer']);
const INFO = 30;

function isBootChatter(args: unknown[]): boolean {
  const first = args[0];
  return typeof first === 'object' && first !== null && NEST_BOOT_CONTEXTS.has(String((first as { context?: unknown }).context));
}

/**
 * A request's path as the log shows it: no query string, and a client review link's token
 * (/review/<token>, the link's only proof) replaced, so a log reader cannot open the page.
 */
export function loggedPath(url: string): string {
  return url.split('?')[0].replace(/^\/review\/[^/]*/i, '/review/[redacted]');
}

export function loggerParams(config: Pick<HeraldConfig, 'logLevel' | 'logFormat'>): Params {
  const options: HttpLoggerOptions = {
    level: config.logLevel,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    // Requests are logged by method and path only: headers and query strings (which may
    // hold an OAuth code or a key someone pasted in a URL) never reach the log.
    serializers: {
      req: (req: IncomingMessage & { id?: unknown }) => ({
        id: req.id,
        method: req.method,
        path: loggedPath(req.url ?? ''),
      }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
    },
    autoLogging: {
      ignore: (req: IncomingMessage) => (req.url ?? '').startsWith('/health') || req.url === '/metrics',
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    hooks: {
      logMethod(args, method, level) {
        if (level === INFO && isBootChatter(args)) {
          this.debug(...args);
          return;
        }
        method.apply(this, args);
      },
    },
  };
  // `auto` reaching here means nobody resolved it against a terminal (tests, embedding): JSON.
  return { pinoHttp: config.logFormat === 'pretty' ? [options, prettyStream()] : options };
}
