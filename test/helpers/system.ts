import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { connectDatabase, Governance } from '@cuadra/shared';
import { checkOutput } from '@cuadra/shared/testing';
import { Redis } from 'ioredis';
import { buildProducts } from '../../gateway/src/catalog.ts';
import { IdentityStore } from '../../gateway/src/identity/store.ts';
import { PeopleStore } from '../../gateway/src/identity/people.ts';
import { repoRoot } from '../../scripts/infra.ts';
import { startSystem, type RunningSystem } from '../../scripts/system.ts';

/** A whole Cuadra system for one test file, plus a way to open workspaces and keys in it. */
export interface TestSystem extends RunningSystem {
  identity: IdentityStore;
  /** Name of the gateway's database in this system. */
  gatewayDb: string;
  /** The governance stores of this system (policies, approvals, ledger), for setting up cases. */
  governanceFor(): Governance;
  /** Opens a workspace; returns its id and owner key. */
  workspace(name?: string): Promise<{ workspace_id: string; api_key: string; key_id: string }>;
  /** Creates another key in a workspace (as the operator does: no person behind it, so it decides no approval). */
  key(workspace: string, role: string, patterns?: string[]): Promise<{ id: string; api_key: string }>;
  /**
   * A person who is a member of the workspace with `role`, and an API key they made (it acts as them:
   * it may decide approvals, never their own requests).
   */
  person(workspace: string, role: string, name?: string): Promise<{ user_id: string; email: string; api_key: string; key_id: string }>;
  /** Calls the gateway as a client would. */
  fetch(pathname: string, init?: { method?: string; key?: string; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; headers: Headers; body: any }>;
  invoke(tool: string, input: unknown, key: string, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }>;
}

/**
 * Starts the five subgraphs and the gateway as real processes on the servers `npm test`
 * started (MONGO_URL, REDIS_URL), with databases of their own for this file.
 */
export async function startTestSystem(label: string, env: Record<string, string> = {}): Promise<TestSystem> {
  const mongoUrl = process.env.MONGO_URL;
  const redisUrl = process.env.REDIS_URL;
  if (!mongoUrl || !redisUrl) throw new Error('MONGO_URL and REDIS_URL are not set: run the tests with `npm test`.');
  const prefix = `t_${label}_${randomBytes(3).toString('hex')}`;
  const system = await startSystem({
    mongoUrl,
    redisUrl,
    dbPrefix: prefix,
    ports: 'free',
    logDir: path.join(process.env.CUADRA_TEST_OUTPUT ?? path.join(repoRoot, 'test-output'), 'logs', prefix),
    // Rate-limit counters live in Redis under the credential id, which is unique per key.
    env: { LOG_LEVEL: 'warn', ...env },
  });
  const db = await connectDatabase(mongoUrl, `${prefix}_gateway`);
  const redis = new Redis(redisUrl);
  const identity = new IdentityStore(db, redis);
  await identity.init();
  const governanceDb = await connectDatabase(mongoUrl, `${prefix}_governance`);
  const governance = new Governance(governanceDb);
  const people = new PeopleStore(db);

  async function call(pathname: string, init: { method?: string; key?: string; body?: unknown; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...init.headers };
    if (init.key) headers.authorization = `Bearer ${init.key}`;
    let body: string | undefined;
    if (init.body !== undefined) {
      body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${system.gatewayUrl}${pathname}`, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, headers: res.headers, body: parsed as any };
  }

  return {
    ...system,
    identity,
    gatewayDb: `${prefix}_gateway`,
    governanceFor: () => governance,
    workspace: (name = 'Test SAS') => identity.createWorkspace({ name, ownerEmail: 'owner@example.com' }),
    key: (workspace, role, patterns) => identity.createApiKey({ workspace, name: `${role} key`, role, patterns }),
    async person(workspace, role, name = role) {
      const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '.')}.${randomBytes(3).toString('hex')}@people.example`;
      const user = await people.createUser({ email, name, password: `${randomBytes(12).toString('hex')}Aa1` });
      await people.setMembership(workspace, user._id, role);
      const key = await identity.createApiKey({ workspace, name: `${name}'s key`, role, createdByPerson: user._id });
      return { user_id: user._id, email, api_key: key.api_key, key_id: key.id };
    },
    fetch: call,
    async invoke(tool, input, key, headers) {
      const answer = await call(`/v1/tools/${tool}:invoke`, { key, body: input, headers });
      // Every real output is held to the output schema its tool declares (issue 15).
      if (answer.status === 200) checkOutput(tool, outputSchemas().get(tool), answer.body?.output);
      return answer;
    },
    async stop() {
      await system.stop();
      redis.disconnect();
      await Promise.all([db.close(), governanceDb.close()]);
    },
  };
}

let schemas: Map<string, unknown> | undefined;
/** The output schemas the build wrote into the catalog, by tool. */
function outputSchemas(): Map<string, unknown> {
  schemas ??= new Map(buildProducts().tools.filter((t) => t.output_schema).map((t) => [t.name, t.output_schema]));
  return schemas;
}
