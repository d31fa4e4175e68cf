import jwt from 'jsonwebtoken';
import { ASSERTION_HEADER } from './credentials.ts';
import { CuadraError } from './errors.ts';
import type { Principal } from './principal.ts';

/** Issuer of the assertions one subgraph sends another (never the gateway's). */
export const SERVICE_ISSUER = 'cuadra-service';
const AUDIENCE = 'cuadra-subgraphs';
const TTL_SECONDS = 60;

/**
 * What a subgraph needs to read another subgraph's graph for a workspace (a buyer's name and tax
 * id from crm for an invoice): the deployment's service key pair and where each subgraph answers.
 * Service calls are reads only: the principal they assert is a viewer that can use no tool.
 */
export interface PeerConfig {
  /** PEM private key (ES256) signing service assertions. */
  privateKey: string;
  /** PEM public key checking them. */
  publicKey: string;
  /** Subgraph name → base URL. */
  urls: Record<string, string>;
}

/** Reads a subgraph's peers from its environment (`CUADRA_SERVICE_KEY`, `CUADRA_SERVICE_PUBLIC_KEY`, `SUBGRAPH_<NAME>_URL`). */
export function peersFromEnv(env: NodeJS.ProcessEnv = process.env): PeerConfig | undefined {
  const privateKey = env.CUADRA_SERVICE_KEY?.replace(/\\n/g, '\n');
  const publicKey = env.CUADRA_SERVICE_PUBLIC_KEY?.replace(/\\n/g, '\n');
  if (!privateKey || !publicKey) return undefined;
  const urls: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    const m = /^SUBGRAPH_([A-Z0-9_]+)_URL$/.exec(key);
    // A list of replicas (the gateway takes them in turn): a peer read goes to the first.
    const first = value?.split(',')[0]?.trim().replace(/\/+$/, '');
    if (m && first) urls[m[1].toLowerCase()] = first;
  }
  return { privateKey, publicKey, urls };
}

/** The principal a service assertion stands for: a read-only viewer of one workspace, named after the calling service. */
export function servicePrincipal(service: string, workspace: string): Principal {
  return { workspace, role: 'viewer', actor: { type: 'service', id: service }, credential_id: `svc:${service}`, scopes: null, patterns: ['%:read'] };
}

/** Signs what `service` asks of a peer on behalf of `workspace`. */
export function signServiceAssertion(service: string, workspace: string, privateKey: string): string {
  return jwt.sign({ ws: workspace, svc: service }, privateKey, { algorithm: 'ES256', issuer: SERVICE_ISSUER, audience: AUDIENCE, expiresIn: TTL_SECONDS, subject: service });
}

/** Checks a service assertion; the principal, or `unauthenticated`. */
export function verifyServiceAssertion(token: string, publicKey: string): Principal {
  try {
    const claims = jwt.verify(token, publicKey, { algorithms: ['ES256'], issuer: SERVICE_ISSUER, audience: AUDIENCE }) as { ws: string; svc: string };
    if (typeof claims.ws !== 'string' || typeof claims.svc !== 'string') throw new Error('claims');
    return servicePrincipal(claims.svc, claims.ws);
  } catch {
    throw new CuadraError('unauthenticated', 'The service assertion is missing, expired or not signed by this deployment.');
  }
}

/** True when a token names the service issuer (read without verifying, to pick the key that checks it). */
export function isServiceAssertion(token: string | undefined): boolean {
  if (!token) return false;
  const decoded = jwt.decode(token, { json: true });
  return decoded?.iss === SERVICE_ISSUER;
}

const signed = new Map<string, { token: string; until: number }>();

/** A service assertion, reused for half its life (signing is the costly part, as for the gateway's). */
function assertionFor(service: string, workspace: string, privateKey: string): string {
  const key = `${service}\n${workspace}`;
  const now = Date.now();
  const hit = signed.get(key);
  if (hit && hit.until > now) return hit.token;
  const token = signServiceAssertion(service, workspace, privateKey);
  if (signed.size > 10_000) signed.clear();
  signed.set(key, { token, until: now + (TTL_SECONDS * 1000) / 2 });
  return token;
}

/** Reads another subgraph's graph for one workspace. */
export type PeerGraph = (subgraph: string, query: string, variables: Record<string, unknown>) => Promise<Record<string, any>>;

/**
 * A peer reader for `service` acting for `workspace`. An unreachable peer answers `unavailable`
 * (the calling tool has done nothing yet); a peer's refusal keeps its code.
 */
export function peerGraph(service: string, peers: PeerConfig | undefined, workspace: string): PeerGraph {
  return async (subgraph, query, variables) => {
    const url = peers?.urls[subgraph];
    if (!peers || !url) throw new CuadraError('unavailable', `The ${subgraph} service is not configured for ${service}.`);
    let res: Response;
    try {
      res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [ASSERTION_HEADER]: assertionFor(service, workspace, peers.privateKey) },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(10_000),
      });
    } catch {
      throw new CuadraError('unavailable', `The ${subgraph} service did not answer; nothing was done.`);
    }
    const body = (await res.json().catch(() => null)) as { data?: Record<string, any>; errors?: { message: string; extensions?: { code?: string } }[] } | null;
    if (!res.ok || !body || body.errors?.length || !body.data) {
      const code = body?.errors?.[0]?.extensions?.code;
      throw new CuadraError(code === 'policy_denied' ? code : 'unavailable', `The ${subgraph} service could not answer: ${body?.errors?.[0]?.message ?? res.status}.`);
    }
    return body.data;
  };
}

/** Audience of the agents service's run assertions: the gateway's pipeline, never a subgraph. */
const AGENT_RUN_AUDIENCE = 'cuadra-gateway';

/** What an agent run asserts to the gateway: the workspace, the agent, the run and the agent's own tool patterns. */
export interface AgentRunClaims { workspace: string; agent: string; run: string; patterns: string[] }

/**
 * Signs the agents service's statement that agent `agent` of `workspace` is calling for run `run`
 * (issue 37). The gateway turns it into the agent's principal — role `agent`, narrowed by the
 * agent's patterns, no person behind it — and sends each of the run's calls through the one
 * pipeline as that principal. Short-lived (60 s) and for the gateway's audience only, so it reads
 * no subgraph's graph and a peer read assertion is not one.
 */
export function signAgentRunAssertion(claims: AgentRunClaims, privateKey: string): string {
  return jwt.sign({ ws: claims.workspace, agt: claims.agent, run: claims.run, pat: claims.patterns }, privateKey, {
    algorithm: 'ES256', issuer: SERVICE_ISSUER, audience: AGENT_RUN_AUDIENCE, expiresIn: TTL_SECONDS, subject: 'agents',
  });
}

/** True when a bearer token is read as the agents service's run assertion (checked by {@link verifyAgentRunAssertion}). */
export function isAgentRunAssertion(token: string): boolean {
  if (token.length > 8192 || token.split('.').length !== 3) return false;
  const decoded = jwt.decode(token, { json: true });
  return decoded?.iss === SERVICE_ISSUER && decoded?.aud === AGENT_RUN_AUDIENCE;
}

/**
 * The principal of a run assertion: the agent as an actor of its workspace, with the built-in
 * `agent` role (which reaches no governance tool: policies, approvals' decisions, agents, keys,
 * roles, members, models, connections) narrowed by the agent's patterns. `unauthenticated` otherwise.
 */
export function verifyAgentRunAssertion(token: string, publicKey: string): Principal {
  let claims: { ws?: unknown; agt?: unknown; run?: unknown; pat?: unknown; sub?: unknown };
  try {
    claims = jwt.verify(token, publicKey, { algorithms: ['ES256'], issuer: SERVICE_ISSUER, audience: AGENT_RUN_AUDIENCE }) as typeof claims;
  } catch {
    throw new CuadraError('unauthenticated', 'The agent run assertion is missing, expired or not signed by this deployment.');
  }
  const ok = claims.sub === 'agents' && typeof claims.ws === 'string' && typeof claims.agt === 'string' && /^agt_/.test(claims.agt)
    && typeof claims.run === 'string' && /^run_/.test(claims.run) && Array.isArray(claims.pat) && claims.pat.every((p) => typeof p === 'string');
  if (!ok) throw new CuadraError('unauthenticated', 'The agent run assertion does not name a workspace, an agent and a run.');
  return {
    workspace: claims.ws as string, role: 'agent', actor: { type: 'agent', id: claims.agt as string }, credential_id: `agent:${claims.agt as string}`,
    scopes: null,
    // An agent with no patterns reaches nothing (an API key without patterns is not narrowed; an agent always is).
    patterns: (claims.pat as string[]).length > 0 ? (claims.pat as string[]) : ['-'],
    person: null, run: claims.run as string,
  };
}
