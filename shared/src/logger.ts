import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * The structured logger every service uses. Level from `LOG_LEVEL` (default `info`;
 * tests set `silent` or `warn`). Secrets never reach it: credentials are redacted.
 */
export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    name: service,
    level,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'api_key', '*.api_key', 'password', '*.password', 'assertion'],
      censor: '[redacted]',
    },
  });
}
