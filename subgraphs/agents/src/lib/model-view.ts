/**
 * What a model reads of a tool's output. Every token of a tool result is read by the model on
 * every later step of the run (the embedded SmolLM2 on two cores reads ~150 tokens a second), and
 * a small model answers better from a short result than from a long one: so the output is given
 * less what says nothing (null, empty text, empty lists and objects), and an agent may name the
 * fields of a tool's output its model reads (`tool_fields`), as it fixes a tool's arguments
 * (`tool_values`). The caller of the tool, the ledger and the run's record of the call are not
 * concerned: this is the model's copy only.
 * @module
 */

/** A field path of a tool's output: names joined by dots, lists crossed as if absent (`rows.customer.name`). */
export const FIELD_PATH = /^[a-z0-9_]+(\.[a-z0-9_]+)*$/;

/** True for a value that says nothing to a model: null, undefined, empty text, an empty list or object. */
function empty(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/**
 * `value` less every object entry that says nothing (null, empty text, empty list or object), at
 * every depth below the output's own fields; what is left, as it was (`false` and `0` are kept:
 * they say something). The output's own fields keep an empty list (a listing's `rows: []` is its
 * answer: nothing was found). List items are kept in place (their position may be what a model
 * refers to).
 */
export function compactForModel(value: unknown, depth = 0): unknown {
  if (depth > 40 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => compactForModel(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const kept = compactForModel(v, depth + 1);
    if (!empty(kept) || (depth === 0 && Array.isArray(kept))) out[k] = kept;
  }
  return out;
}

/**
 * Only the named fields of `value` (paths of {@link FIELD_PATH}), in the output's own order and
 * shape: `rows.number` keeps `{rows: [{number}, …]}`; a list is crossed as if it were absent. A
 * path that names nothing adds nothing; `value` itself when `paths` is empty.
 */
export function pickFields(value: unknown, paths: readonly string[]): unknown {
  if (paths.length === 0) return value;
  const tree: FieldTree = new Map();
  for (const path of paths) {
    const names = path.split('.');
    let node = tree;
    for (const [i, name] of names.entries()) {
      const known = node.get(name);
      // A shorter path keeps the whole field already: a longer one under it changes nothing.
      if (known === true) break;
      if (i === names.length - 1) {
        node.set(name, true);
        break;
      }
      const next: FieldTree = known ?? new Map();
      node.set(name, next);
      node = next;
    }
  }
  return pick(value, tree);
}

/** Field names to keep, each the whole value (`true`) or some of its fields. */
type FieldTree = Map<string, FieldTree | true>;

function pick(value: unknown, tree: FieldTree): unknown {
  if (Array.isArray(value)) return value.map((v) => pick(v, tree)).filter((v) => v !== undefined);
  if (value === null || typeof value !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const wanted = tree.get(k);
    if (wanted === undefined) continue;
    const kept = wanted === true ? v : pick(v, wanted);
    if (kept !== undefined) out[k] = kept;
  }
  return out;
}
