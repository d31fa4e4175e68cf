import { randomBytes } from 'node:crypto';
import { generateSigningKeyPair, newId, signAssertion, ASSERTION_HEADER } from './credentials.ts';
import { connectDatabase } from './db.ts';
import { createAjv } from './validation.ts';
import type { ValidateFunction } from 'ajv';
import { createLogger } from './logger.ts';
import type { Principal } from './principal.ts';
import type { SubgraphDeps, SubgraphServer } from './subgraph.ts';
import { toolMutationName } from './subgraph.ts';
import type { Connection } from 'mongoose';
import { Governance } from './governance/index.ts';

let keys: { privateKey: string; publicKey: string } | undefined;

const outputAjv = createAjv();
const outputValidators = new Map<string, ValidateFunction>();

/**
 * Checks a tool's real output against the output schema it declares (issue 15: every tool's
 * output schema is published, and the tests hold the outputs to it). Throws with ajv's errors.
 */
export function checkOutput(tool: string, schema: unknown, output: unknown): void {
  if (!schema) return;
  let validate = outputValidators.get(tool);
  if (!validate) {
    validate = outputAjv.compile(schema as object);
    outputValidators.set(tool, validate);
  }
  if (!validate(output)) {
    throw new Error(`The output of ${tool} does not match its declared output schema: ${outputAjv.errorsText(validate.errors, { dataVar: 'output' })}\n${JSON.stringify(output).slice(0, 2000)}`);
  }
}

/** One ES256 key pair per test process, standing in for the gateway's. */
export function testSigningKeys(): { privateKey: string; publicKey: string } {
  keys ??= generateSigningKeyPair();
  return keys;
}

let serviceKeys: { privateKey: string; publicKey: string } | undefined;

/** One ES256 key pair per test process for service assertions (subgraph → subgraph reads). */
export function testServiceKeys(): { privateKey: string; publicKey: string } {
  serviceKeys ??= generateSigningKeyPair();
  return serviceKeys;
}

/** A principal of a fresh workspace (owner API key unless overridden). */
export function testPrincipal(overrides: Partial<Principal> = {}): Principal {
  return {
    workspace: newId('ws'),
    role: 'owner',
    actor: { type: 'api_key', id: newId('key') },
    credential_id: newId('key'),
    scopes: null,
    patterns: null,
    ...overrides,
  };
}

/** The result of a tool call made straight at a subgraph. */
export interface SubgraphCall {
  ok: boolean;
  /** The tool's output when `ok`. */
  output?: any;
  code?: string;
  field?: string;
  message?: string;
  httpStatus: number;
  /** Held for approval (202). */
  pending?: boolean;
  approvalId?: string;
  replayed?: boolean;
}

/** A subgraph started on a throwaway database, listening on a free port. */
export interface TestSubgraph {
  url: string;
  db: Connection;
  governance: Governance;
  /** Runs the approval sweep once (tests drive it by hand instead of waiting for the timer). */
  sweep(): Promise<void>;
  call(tool: string, input: unknown, principal: Principal, options?: { idempotencyKey?: string; approvalId?: string }): Promise<SubgraphCall>;
  graphql(query: string, variables: Record<string, unknown>, principal: Principal | null): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/**
 * Starts a subgraph as its own team would test it: real MongoDB-protocol server
 * (`MONGO_URL`, started by the test runner), a database named after the test, real HTTP.
 */
export async function startTestSubgraph(
  name: string,
  createServer: (deps: SubgraphDeps) => Promise<SubgraphServer>,
  options: { peers?: Record<string, Pick<TestSubgraph, 'url'>> } = {},
): Promise<TestSubgraph> {
  const mongoUrl = process.env.MONGO_URL;
  if (!mongoUrl) throw new Error('MONGO_URL is not set: run tests with `npm test` (it starts the servers).');
  const suffix = randomBytes(4).toString('hex');
  const db = await connectDatabase(mongoUrl, `test_${name}_${suffix}`);
  const governanceDb = await connectDatabase(mongoUrl, `test_${name}_${suffix}_governance`);
  const governance = new Governance(governanceDb);
  await governance.init();
  const server = await createServer({ db, log: createLogger(name, process.env.LOG_LEVEL ?? 'silent'), assertionPublicKey: testSigningKeys().publicKey, governance, runApprovals: false,
    peers: { ...testServiceKeys(), urls: Object.fromEntries(Object.entries(options.peers ?? {}).map(([peer, sg]) => [peer, sg.url])) } });
  const { url } = await server.listen(0);

  async function graphql(query: string, variables: Record<string, unknown>, principal: Principal | null) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (principal) headers[ASSERTION_HEADER] = signAssertion(principal, testSigningKeys().privateKey);
    const res = await fetch(`${url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
    return { status: res.status, body: (await res.json()) as any };
  }

  return {
    url,
    db,
    governance,
    graphql,
    sweep: () => server.owner.sweep(),
    async call(tool, input, principal, options = {}) {
      const mutation = toolMutationName(name);
      const { status, body } = await graphql(
        `mutation($tool: String!, $input: JSON!, $key: String, $approval: String) { ${mutation}(tool: $tool, input: $input, idempotencyKey: $key, approvalId: $approval) }`,
        { tool, input, key: options.idempotencyKey ?? null, approval: options.approvalId ?? null },
        principal,
      );
      if (body.errors?.length) {
        const e = body.errors[0];
        return { ok: false, code: e.extensions?.code, field: e.extensions?.field, message: e.message, httpStatus: status };
      }
      if (!body.data) return { ok: false, code: body.code, message: body.error, httpStatus: status };
      const answer = body.data[mutation] as { status: number; body: Record<string, any>; replayed?: boolean };
      if (answer.status === 200) {
        checkOutput(tool, server.registry.get(tool)?.output, answer.body.output);
        return { ok: true, output: answer.body.output, httpStatus: 200, replayed: answer.replayed };
      }
      if (answer.status === 202) return { ok: false, pending: true, approvalId: answer.body.approval_id, httpStatus: 202, replayed: answer.replayed };
      return { ok: false, code: answer.body.code, field: answer.body.field, message: answer.body.error, approvalId: answer.body.approval_id, httpStatus: answer.status, replayed: answer.replayed };
    },
    async close() {
      await server.stop();
      await db.dropDatabase().catch(() => undefined);
      await governanceDb.dropDatabase().catch(() => undefined);
      await Promise.all([db.close(), governanceDb.close()]);
    },
  };
}

/** Every document of every collection of a database as one JSON text: where a leaked secret would show. */
export async function dumpDatabase(db: Connection): Promise<string> {
  const parts: string[] = [];
  for (const { name } of await db.db!.listCollections().toArray()) parts.push(JSON.stringify(await db.db!.collection(name).find({}).toArray()));
  return parts.join('\n');
}
