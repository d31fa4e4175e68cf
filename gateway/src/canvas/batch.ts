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

/**
 * Reads of one render through the composed graph, merged: every read asked for in the same turn
 * of the event loop by the same principal goes out as one operation (its root fields aliased
 * `b<i>_<key>`, its variables renamed `b<i>_<name>`), so the planner sends one request per
 * subgraph instead of one per read. Each caller gets back exactly its own fields. When the merged
 * operation fails at all (any error), every read is run again on its own, so a failing block fails
 * with its own error, as unmerged, and the others still answer.
 */
export function batchGraphReads(run: GraphRunner): GraphRunner {
  const parsed = new Map<string, OperationDefinitionNode | null>();
  const operationOf = (query: string): OperationDefinitionNode | null => {
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
  };
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
      const definitions: VariableDefinitionNode[] = [];
      const fields: FieldNode[] = [];
      const variables: Record<string, unknown> = {};
      const keys: string[][] = [];
      group.forEach((p, i) => {
        const renamed = visit(operationOf(p.query)!, {
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
        for (const [name, value] of Object.entries(p.variables)) variables[`b${i}_${name}`] = value;
      });
      const merged: OperationDefinitionNode = {
        kind: Kind.OPERATION_DEFINITION, operation: 'query' as OperationDefinitionNode['operation'], name: { kind: Kind.NAME, value: 'CanvasReads' },
        variableDefinitions: definitions, selectionSet: { kind: Kind.SELECTION_SET, selections: fields },
      };
      let data: Record<string, unknown>;
      try {
        data = await run(group[0].principal, print({ kind: Kind.DOCUMENT, definitions: [merged] }), variables);
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
