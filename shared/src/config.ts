/** Settings every service reads from its environment (docker-compose sets them; `npm start` too). */
export interface ServiceConfig {
  mongoUrl: string;
  redisUrl: string;
  host: string;
  port: number;
  /** Database name of this service (`cuadra_<service>` unless `MONGO_DB` says otherwise). */
  dbName: string;
  /** PEM public key checking gateway assertions. */
  assertionPublicKey: string;
  /** The governance database (ledger, idempotency, policies, approvals) shared by every service. */
  governanceDb: string;
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`The environment variable ${name} is required.`);
  return value;
}

/** Reads a service's settings; `defaultPort` applies when `PORT` is unset. */
export function serviceConfig(service: string, defaultPort: number, env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  return {
    mongoUrl: required(env, 'MONGO_URL'),
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    host: env.HOST ?? '127.0.0.1',
    port: env.PORT ? Number(env.PORT) : defaultPort,
    dbName: env.MONGO_DB ?? `cuadra_${service}`,
    assertionPublicKey: required(env, 'CUADRA_ASSERTION_PUBLIC_KEY').replace(/\\n/g, '\n'),
    governanceDb: env.GOVERNANCE_DB ?? 'cuadra_governance',
  };
}
