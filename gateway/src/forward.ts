import { ASSERTION_HEADER, CuadraError, isErrorCode, toolMutationName, type OwnedAnswer } from '@cuadra/shared';
import { Pool } from 'undici';

/**
 * Sends invokes straight to the owning subgraph's tool mutation over kept-alive
 * connections (one undici pool per subgraph), skipping the query planner: the tool
 * mutation is a single field on a single subgraph, so there is nothing to plan.
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
   * included). Throws `unavailable` when the subgraph cannot be reached, `internal` otherwise.
   */
  async invoke(subgraph: string, tool: string, input: unknown, assertion: string, options: { idempotencyKey?: string; approvalId?: string } = {}): Promise<OwnedAnswer> {
    const mutation = toolMutationName(subgraph);
    const body = JSON.stringify({
      query: `mutation Invoke($tool: String!, $input: JSON!, $key: String, $approval: String) { ${mutation}(tool: $tool, input: $input, idempotencyKey: $key, approvalId: $approval) }`,
      variables: { tool, input, key: options.idempotencyKey ?? null, approval: options.approvalId ?? null },
    });
    let status: number;
    let payload: { data?: Record<string, OwnedAnswer> | null; errors?: { message: string; extensions?: { code?: string; field?: string; extra?: Record<string, unknown> } }[]; code?: string };
    try {
      const res = await this.#pool(subgraph).request({
        path: '/graphql',
        method: 'POST',
        headers: { 'content-type': 'application/json', [ASSERTION_HEADER]: assertion },
        body,
      });
      status = res.statusCode;
      payload = (await res.body.json()) as typeof payload;
    } catch (err) {
      throw new CuadraError('unavailable', `The ${subgraph} service is not answering; nothing was done. Try again shortly.`, { cause: err });
    }
    const first = payload.errors?.[0];
    if (first) {
      const code = first.extensions?.code;
      if (isErrorCode(code)) throw new CuadraError(code, first.message, { field: first.extensions?.field, extra: first.extensions?.extra });
      throw new CuadraError('internal', 'The owning service could not run the tool.', { cause: new Error(`${subgraph}: ${first.message}`) });
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
