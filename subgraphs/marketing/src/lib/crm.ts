import { CuadraError, type PeerGraph } from '@cuadra/shared';

/*
 * Parties come from crm through the composed graph with the service assertion (a subgraph never
 * reads another's collections). A crm that does not answer is `unavailable` before anything here
 * was written.
 */

/** A party as marketing needs it. */
export interface AudienceParty { id: string; name: string; email: string | null; kind: string; tags: string[] }

/** Who a campaign is for: parties of a kind, with every tag given, with the custom field values given. */
export interface AudienceRule { kind?: 'customer' | 'vendor' | 'both'; tags?: string[]; fields?: Record<string, string | number | boolean> }

function needGraph(graph: PeerGraph | undefined): PeerGraph {
  if (!graph) throw new CuadraError('unavailable', 'The crm service is not configured here; nothing was done.', { beforeAnyEffect: true });
  return graph;
}

async function ask(graph: PeerGraph | undefined, query: string, variables: Record<string, unknown>): Promise<Record<string, any>> {
  try {
    return await needGraph(graph)('crm', query, variables);
  } catch (err) {
    if (err instanceof CuadraError && err.code === 'unavailable') throw new CuadraError('unavailable', err.message, { beforeAnyEffect: true });
    throw err;
  }
}

/** One party of the workspace, or null. */
export async function readParty(graph: PeerGraph | undefined, id: string): Promise<AudienceParty | null> {
  const data = await ask(graph, 'query($id: ID!) { party(id: $id) { id name email kind tags status } }', { id });
  const p = data.party as (AudienceParty & { status: string }) | null;
  return p ? { id: p.id, name: p.name, email: p.email, kind: p.kind, tags: p.tags } : null;
}

/** Every active party an audience rule selects, newest first, read a page at a time (at most `max`). */
export async function readAudience(graph: PeerGraph | undefined, rule: AudienceRule, max = 50_000): Promise<AudienceParty[]> {
  const out: AudienceParty[] = [];
  let cursor: string | null = null;
  do {
    const data = await ask(graph, 'query($kind: String, $tags: [String!], $fields: JSON, $cursor: String) { partiesPage(kind: $kind, tags: $tags, fields: $fields, cursor: $cursor, limit: 100) { rows { id name email kind tags } nextCursor } }', {
      kind: rule.kind ?? null, tags: rule.tags ?? null, fields: rule.fields ?? null, cursor,
    });
    const page = data.partiesPage as { rows: AudienceParty[]; nextCursor: string | null };
    out.push(...page.rows);
    cursor = page.nextCursor;
  } while (cursor && out.length < max);
  return out;
}
