import { ASSERTION_HEADER, CuadraError, OUTCOME_UNKNOWN_MESSAGE, TOOL_INVOKE_PATH, toolMutationName, type OwnedAnswer } from '@cuadra/shared';

/**
 * Failures that prove the request never reached the subgraph: the connection was never made.
 * Anything else after the request was handed to a socket (reset, closed, timed out) may have
 * reached it, so its outcome is unknown (CONTRACT.md §9).
 */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** True when the error proves nothing reached the subgraph. */
export function neverReached(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && NEVER_SENT.has(e.code)) return true;
  }
  return false;
}
import { Pool } from 'undici';
import { errorFromGraph } from './refusals.ts';

/**
 * Sends invokes straight to the owning subgraph's tool mutation over kept-alive
 * connections (one undici pool per subgraph), skipping the query planner: the tool
 * mutation is a single field on a single subgraph, so there is nothing to plan — and
 * skipping GraphQL too (the subgraph's `POST /invoke` runs the same field's code).
 */
export class SubgraphForwarder {
  readonly #pools = new Map<string, Pool>();
  readonly #urls: Record<string, string>;

  constructor(urls: Record<string, string>) {
    this.#urls = urls;
  }

  #pool(subgraph: string): Pool {
    let pool = this.#pools.get(subgraph);
    if (!pool) {
      pool = new Pool(this.#urls[subgraph], { connections: 64, keepAliveTimeout: 30_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
      this.#pools.set(subgraph, pool);
    }
    return pool;
  }

  /**
   * Runs a tool on its subgraph; resolves to the owner's answer (status and body, refusals
   * included). Throws `unavailable` only when the request provably never reached the subgraph
   * (no connection), `outcome_unknown` when it was sent and no answer came back, `internal` for
   * an answer that is not one.
   */
  async invoke(subgraph: string, tool: string, input: unknown, assertion: string, options: { idempotencyKey?: string; approvalId?: string } = {}): Promise<OwnedAnswer> {
    const mutation = toolMutationName(subgraph);
    // The tool mutation's own route: the same arguments and answer as the GraphQL field, no document to execute.
    const body = JSON.stringify({ tool, input, idempotencyKey: options.idempotencyKey ?? null, approvalId: options.approvalId ?? null });
    let status: number;
    let payload: { data?: Record<string, OwnedAnswer> | null; errors?: { message: string; extensions?: { code?: string; field?: string; extra?: Record<string, unknown> } }[]; code?: string };
    try {
      const res = await this.#pool(subgraph).request({
        path: TOOL_INVOKE_PATH,
        method: 'POST',
        headers: { 'content-type': 'application/json', [ASSERTION_HEADER]: assertion },
        body,
      });
      status = res.statusCode;
      payload = (await res.body.json()) as typeof payload;
    } catch (err) {
      if (neverReached(err)) throw new CuadraError('unavailable', `The ${subgraph} service is not answering; nothing was done. Try again shortly.`, { cause: err });
      throw new CuadraError('outcome_unknown', OUTCOME_UNKNOWN_MESSAGE, { cause: err });
    }
    const first = payload.errors?.[0];
    if (first) {
      // The owner answered with an error: it wrote the attempt's ledger entry itself.
      throw errorFromGraph(first, (e) => new CuadraError('internal', 'The owning service could not run the tool.', { cause: new Error(`${subgraph}: ${e.message}`) }), { recordedByOwner: true });
    }
    const answer = payload.data?.[mutation];
    if (status !== 200 || !answer) {
      throw new CuadraError('internal', 'The owning service gave no answer.', { cause: new Error(`${subgraph} answered ${status} ${payload.code ?? ''}`) });
    }
    return answer;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pools.values()].map((p) => p.close()));
  }
}
