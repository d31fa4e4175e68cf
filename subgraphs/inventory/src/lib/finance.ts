import { CuadraError, type PeerGraph } from '@cuadra/shared';

/*
 * Items and the accounting periods live in finance (the invoices subgraph). Inventory reads them
 * through the composed graph with the read-only service assertion (shared peers.ts); it never
 * reads finance's collections nor imports its code. A finance that does not answer is
 * `unavailable` before anything here was written.
 */

/** A catalog item as inventory needs it. */
export interface FinanceItem { id: string; kind: 'product' | 'service'; name: string; sku: string | null; unit: string; currency: string }

async function ask(graph: PeerGraph | undefined, query: string, variables: Record<string, unknown>): Promise<Record<string, any>> {
  if (!graph) throw new CuadraError('unavailable', 'The finance service is not configured here; nothing was done.', { beforeAnyEffect: true });
  try {
    return await graph('invoices', query, variables);
  } catch (err) {
    if (err instanceof CuadraError && err.code === 'unavailable') throw new CuadraError('unavailable', err.message, { beforeAnyEffect: true });
    throw err;
  }
}

/** The workspace's item `id` (a federation entity reference to finance's Item), or null. */
export async function readItem(graph: PeerGraph | undefined, id: string): Promise<FinanceItem | null> {
  const data = await ask(graph, 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Item { id kind name sku unit currency } } }', { r: [{ __typename: 'Item', id }] });
  const found = (data._entities as (FinanceItem | null)[] | undefined)?.[0];
  return found && found.id ? found : null;
}

/** The months (`YYYY-MM`) from `from` on that finance has closed (or is closing): nothing dated in them may change. */
export async function closedMonthsFrom(graph: PeerGraph | undefined, from: string): Promise<string[]> {
  const data = await ask(graph, 'query($from: String!) { closedPeriods(from: $from) }', { from: from.slice(0, 7) });
  return (data.closedPeriods as string[] | undefined) ?? [];
}
