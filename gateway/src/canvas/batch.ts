import { Kind, parse, print, visit, type DocumentNode, type FieldNode, type OperationDefinitionNode, type VariableDefinitionNode } from 'graphql';
import type { Principal } from '@cuadra/shared';
import type { GraphRunner } from './routes.ts';

interface Pending {
  principal: Principal;
  query: string;
  variables: Record<string, unknown>;
  resolve(data: Record<string, unknown>): void;
  reject(err: unknown): void;
}

/** The one query operation of a document with root fields only, or null when it cannot be merged. */
function mergeable(doc: DocumentNode): OperationDefinitionNode | null {
  if (doc.definitions.length !== 1) return null;
  const op = doc.definitions[0];
  if (op.kind !== Kind.OPERATION_DEFINITION || op.operation !== 'query' || (op.directives?.length ?? 0) > 0) return null;
  return op.selectionSet.selections.every((s) => s.kind === Kind.FIELD) ? op : null;
}

// Kept across renders (texts only, at most 1,000 of each): a render merges a new batcher's reads,
// and a dashboard asks the same operations, in the same order, every time.
const parsed = new Map<string, OperationDefinitionNode | null>();
const merges = new Map<string, Merged>();

/** The mergeable operation of a read's text (parsed once), or null. */
function operationOf(query: string): OperationDefinitionNode | null {
  if (!parsed.has(query)) {
    let op: OperationDefinitionNode | null = null;
    try {
      op = mergeable(parse(query));
    } catch {
      op = null; // the runner gives the parse error on its own
    }
    if (parsed.size > 1_000) parsed.clear();
    parsed.set(query, op);
  }
  return parsed.get(query)!;
}

/** The merged operation of a list of mergeable reads, made once per list. */
function mergedOf(queries: string[]): Merged {
  const id = queries.join('\u0000');
  let m = merges.get(id);
  if (!m) {
    m = merge(queries.map((q) => operationOf(q)!));
    if (merges.size > 1_000) merges.clear();
    merges.set(id, m);
  }
  return m;
}

/** One operation of several reads: its text, and each read's root keys (aliased `b<i>_<key>` in it). */
interface Merged { text: string; keys: string[][] }

/** The reads' operations as one: root fields aliased `b<i>_<key>`, variables renamed `b<i>_<name>`. */
function merge(operations: OperationDefinitionNode[]): Merged {
  const definitions: VariableDefinitionNode[] = [];
  const fields: FieldNode[] = [];
  const keys: string[][] = [];
  operations.forEach((operation, i) => {
    const renamed = visit(operation, {
      Variable: (node) => ({ ...node, name: { ...node.name, value: `b${i}_${node.name.value}` } }),
    }) as OperationDefinitionNode;
    definitions.push(...(renamed.variableDefinitions ?? []));
    const own: string[] = [];
    for (const field of renamed.selectionSet.selections as FieldNode[]) {
      const key = (field.alias ?? field.name).value;
      own.push(key);
      fields.push({ ...field, alias: { kind: Kind.NAME, value: `b${i}_${key}` } });
    }
    keys.push(own);
  });
  const merged: OperationDefinitionNode = {
    kind: Kind.OPERATION_DEFINITION, operation: 'query' as OperationDefinitionNode['operation'], name: { kind: Kind.NAME, value: 'CanvasReads' },
    variableDefinitions: definitions, selectionSet: { kind: Kind.SELECTION_SET, selections: fields },
  };
  return { text: print({ kind: Kind.DOCUMENT, definitions: [merged] }), keys };
}

/**
 * Reads of one render through the composed graph, merged: every read asked for in the same turn
 * of the event loop by the same principal goes out as one operation (its root fields aliased
 * `b<i>_<key>`, its variables renamed `b<i>_<name>`), so the planner sends one request per
 * subgraph instead of one per read. Each caller gets back exactly its own fields. When the merged
 * operation fails at all (any error), every read is run again on its own, so a failing block fails
 * with its own error, as unmerged, and the others still answer.
 */
export function batchGraphReads(run: GraphRunner): GraphRunner {
  let pending: Pending[] = [];

  const alone = (p: Pending) => run(p.principal, p.query, p.variables).then(p.resolve, p.reject);

  async function flush(batch: Pending[]): Promise<void> {
    const byPrincipal = new Map<Principal, Pending[]>();
    for (const p of batch) {
      if (!operationOf(p.query)) {
        void alone(p);
        continue;
      }
      const list = byPrincipal.get(p.principal) ?? [];
      list.push(p);
      byPrincipal.set(p.principal, list);
    }
    await Promise.all([...byPrincipal.values()].map(async (group) => {
      if (group.length === 1) return alone(group[0]);
      const { text, keys } = mergedOf(group.map((p) => p.query));
      const variables: Record<string, unknown> = {};
      group.forEach((p, i) => {
        for (const [name, value] of Object.entries(p.variables)) variables[`b${i}_${name}`] = value;
      });
      let data: Record<string, unknown>;
      try {
        data = await run(group[0].principal, text, variables);
      } catch {
        await Promise.all(group.map(alone));
        return;
      }
      group.forEach((p, i) => p.resolve(Object.fromEntries(keys[i].map((key) => [key, data[`b${i}_${key}`]]))));
    }));
  }

  return (principal, query, variables = {}) => new Promise((resolve, reject) => {
    pending.push({ principal, query, variables, resolve, reject });
    if (pending.length === 1) {
      // After the current turn's promise jobs: every read a render starts at once is queued by then.
      setImmediate(() => {
        const batch = pending;
        pending = [];
        void flush(batch).catch((err) => batch.forEach((p) => p.reject(err)));
      });
    }
  });
}
