/**
 * What a subgraph answers for the composite reads (specification §2.3, §2.5, §2.6, and the kanban
 * block's `board` of §2.2): each records source, metric, agenda lane and board it owns, the graph field that answers it, and the tool module
 * whose read reach it needs. Declared once beside the subgraph; the build writes every
 * subgraph's declarations into the catalog, and the gateway routes `records.list`,
 * `metrics.query` and the agenda from there — adding a source or metric edits no gateway file.
 */
export interface ReadRoute {
  /** The root Query field of this subgraph that answers it (`invoicesRecords`). */
  field: string;
  /** The tool module whose read tools guard it (`payments`). */
  module: string;
}

export type ReadKind = 'sources' | 'metrics' | 'agenda' | 'boards';
export const READ_KINDS: readonly ReadKind[] = ['sources', 'metrics', 'agenda', 'boards'];

/** A subgraph's composite reads. */
export type ReadDeclarations = Partial<Record<ReadKind, Record<string, ReadRoute>>>;

/** A route as the catalog holds it: with the subgraph that owns it. */
export interface OwnedReadRoute extends ReadRoute {
  subgraph: string;
  /**
   * Agenda lanes only: the other subgraphs answering the same lane (the `recurring` lane holds
   * recurring invoices from invoices and payroll dates from payroll); the gateway merges them.
   */
  also?: OwnedReadRoute[];
}

/** Every subgraph's composite reads, by kind and name. */
export type CatalogReads = Record<ReadKind, Record<string, OwnedReadRoute>>;

/** The module guarding `key` among `routes`, or `fallback` (an unknown key is refused after the guard by the field itself). */
export function readModule(routes: Record<string, ReadRoute> | undefined, key: unknown, fallback: string): string {
  return typeof key === 'string' && routes && Object.hasOwn(routes, key) ? routes[key].module : fallback;
}

/**
 * Collects the subgraphs' declarations for the catalog. A name claimed twice (but an agenda lane,
 * which several subgraphs may answer together), or a field the subgraph's SDL does not define,
 * fails the build.
 */
export function collectReads(subgraphs: readonly { name: string; typeDefs: string; reads?: ReadDeclarations }[]): CatalogReads {
  const out: CatalogReads = { sources: {}, metrics: {}, agenda: {}, boards: {} };
  for (const sg of subgraphs) {
    for (const kind of READ_KINDS) {
      for (const [name, route] of Object.entries(sg.reads?.[kind] ?? {})) {
        const owner = out[kind][name];
        if (!new RegExp(`\\b${route.field}\\s*[(:]`).test(sg.typeDefs)) throw new Error(`${sg.name} declares ${kind} "${name}" answered by ${route.field}, which its schema does not define.`);
        // An agenda lane is a list of dated entries: several subgraphs may each add theirs to one lane.
        if (owner && kind === 'agenda' && owner.subgraph !== sg.name && !owner.also?.some((a) => a.subgraph === sg.name)) {
          owner.also = [...(owner.also ?? []), { ...route, subgraph: sg.name }];
          continue;
        }
        if (owner) throw new Error(`The ${kind.replace(/s$/, '')} "${name}" is declared by both ${owner.subgraph} and ${sg.name}.`);
        out[kind][name] = { ...route, subgraph: sg.name };
      }
    }
  }
  return out;
}
