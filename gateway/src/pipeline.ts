import { assertReach, CuadraError, toCuadraError, type Principal, type RateLimiter, type ToolAnswer } from '@cuadra/shared';
import type { AssertionSigner } from './assertions.ts';
import type { Catalog } from './catalog.ts';
import type { SubgraphForwarder } from './forward.ts';
import type { IdentityStore } from './identity/store.ts';

/** How a surface hands over the request body: read lazily, so size is checked before parsing. */
export type BodySource = (limitBytes: number) => Promise<unknown>;

/** One invoke, as any surface (REST, MCP, canvas) describes it. */
export interface InvokeRequest {
  authorization: string | undefined;
  tool: string;
  body: BodySource;
  tenant?: string;
  /** `Idempotency-Key` header (1–255 visible ASCII characters). */
  idempotencyKey?: string;
  /** `X-Approval-Id` header: runs an `ask` call its approval allowed. */
  approvalId?: string;
}

/** The answer of the pipeline: headers always, and either the tool's answer or a thrown refusal. */
export interface InvokeResult {
  /** 200 (the tool ran: body `{tool, output}`) or 202 (held: body `{tool, status: "pending_approval", approval_id}`). */
  status: 200 | 202;
  body: ToolAnswer | { tool: string; status: 'pending_approval'; approval_id: string };
  /** RateLimit headers, and `Idempotent-Replayed: true` on a replay. */
  headers: Record<string, string>;
}

/** A refusal carrying the headers gathered so far (rate-limit headers belong on every answer). */
export class PipelineRefusal extends Error {
  readonly error: CuadraError;
  readonly headers: Record<string, string>;
  constructor(error: CuadraError, headers: Record<string, string>) {
    super(error.message);
    this.error = error;
    this.headers = headers;
  }
}

/**
 * The gateway's half of the one invoke pipeline (CONTRACT.md §3): authenticate → rate limit →
 * find → tenant/scope/role/pattern → size → validate → run on the owning subgraph (which checks
 * reach and input again before running).
 */
export class InvokePipeline {
  readonly #identity: IdentityStore;
  readonly #limiter: RateLimiter;
  readonly #catalog: Catalog;
  readonly #forwarder: SubgraphForwarder;
  readonly #signer: AssertionSigner;

  constructor(deps: { identity: IdentityStore; limiter: RateLimiter; catalog: Catalog; forwarder: SubgraphForwarder; signer: AssertionSigner }) {
    this.#identity = deps.identity;
    this.#limiter = deps.limiter;
    this.#catalog = deps.catalog;
    this.#forwarder = deps.forwarder;
    this.#signer = deps.signer;
  }

  /** Step 1: who is calling. */
  async authenticate(authorization: string | undefined): Promise<Principal> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match) throw new CuadraError('unauthenticated', 'Send a credential: Authorization: Bearer <API key or access token>.');
    return this.#identity.authenticateApiKey(match[1]);
  }

  /** Checks `X-Tenant-Id`: it may only name the credential's own workspace. */
  static checkTenant(principal: Principal, tenant: string | undefined): void {
    if (tenant !== undefined && tenant !== principal.workspace) {
      throw new CuadraError('policy_denied', 'X-Tenant-Id names a workspace this credential does not belong to.');
    }
  }

  async invoke(req: InvokeRequest): Promise<InvokeResult> {
    const principal = await this.authenticate(req.authorization);
    let headers: Record<string, string> = {};
    try {
      headers = await this.#limiter.consume(principal);
    } catch (err) {
      const extra = (err as CuadraError).extra as { headers?: Record<string, string> } | undefined;
      throw new PipelineRefusal(toCuadraError(err), extra?.headers ?? {});
    }
    try {
      const entry = this.#catalog.get(req.tool);
      if (!entry) throw new CuadraError('unknown_tool', `No tool is named "${req.tool}". GET /v1/tools lists the tools this credential reaches.`);
      InvokePipeline.checkTenant(principal, req.tenant);
      assertReach(principal, entry);
      const input = await req.body(entry.max_input_bytes);
      this.#catalog.validate(entry.name, input);
      const answer = await this.#forwarder.invoke(entry.subgraph, entry.name, input, this.#signer.for(principal));
      return { status: 200, body: answer, headers };
    } catch (err) {
      throw new PipelineRefusal(toCuadraError(err), headers);
    }
  }
}
