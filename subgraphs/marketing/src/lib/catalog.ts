import { CuadraError, type PeerGraph } from '@cuadra/shared';

/*
 * The workspace's catalog (products and services) lives in finance (the invoices subgraph). A
 * site's list of items reads it through the graph with the read-only service assertion (shared
 * peers.ts), as federation entity references in one request; marketing never reads finance's
 * collections nor imports its code.
 */

/** A catalog item as a site shows it: its name and its price with VAT, as finance states them. */
export interface CatalogItem { id: string; name: string; status: 'active' | 'archived'; priceWithTax: number; currency: string }

/** The most items one read asks for (a page's lists together name at most this many). */
export const CATALOG_READ_MAX = 500;

/**
 * The items of the workspace among `ids`, by id; an id that names no item of the workspace (never
 * made, another workspace's, deleted) is absent. Finance not answering is `unavailable`.
 */
export async function readCatalogItems(graph: PeerGraph | undefined, ids: readonly string[]): Promise<Map<string, CatalogItem>> {
  const unique = [...new Set(ids)].slice(0, CATALOG_READ_MAX);
  const found = new Map<string, CatalogItem>();
  if (unique.length === 0) return found;
  if (!graph) throw new CuadraError('unavailable', 'The finance service is not configured here; nothing was done.', { beforeAnyEffect: true });
  let data: Record<string, any>;
  try {
    data = await graph('invoices', 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Item { id name status priceWithTax currency } } }', { r: unique.map((id) => ({ __typename: 'Item', id })) });
  } catch (err) {
    // Nothing was written before the catalog was read: the caller's change can be retried as it is.
    if (err instanceof CuadraError && err.code === 'unavailable') throw new CuadraError('unavailable', err.message, { beforeAnyEffect: true });
    throw err;
  }
  for (const item of (data._entities as (CatalogItem | null)[] | undefined) ?? []) {
    if (item?.id) found.set(item.id, item);
  }
  return found;
}
