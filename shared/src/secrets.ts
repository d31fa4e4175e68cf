import type { JsonSchema } from './tool.ts';

/**
 * Secret fields are declared in the schema (CONTRACT.md §10): `writeOnly: true` (the JSON Schema
 * keyword; an input's secret is sent, never given back) or `x-secret: true` (for an output's secret,
 * which the direct answer does carry: an API key shown once), at any depth. This file reads where a
 * schema puts its secrets, and holds the rule by which the build refuses a field named like a secret
 * that is not declared one.
 */
export const SECRET_KEYWORD = 'x-secret';

/** Is this (sub)schema a declared secret? */
export function declaredSecret(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const s = schema as Record<string, unknown>;
  return s.writeOnly === true || s[SECRET_KEYWORD] === true;
}

/**
 * Where a schema puts its secrets: a graph of the places a value may stand. A value at a node is
 * secret when the node is; an object's property `p` goes to `props[p]` and `rest`, an array's items
 * to `items`; `alts` are schemas that apply at the same place (`allOf`, `anyOf`, `oneOf`, `then`,
 * `else`, a `$ref`). Over-approximate on purpose: a field secret in one branch is treated as secret
 * wherever it stands in any branch. The graph may have cycles (a recursive `$ref`).
 */
export interface SecretShape {
  secret: boolean;
  props: Map<string, SecretShape[]>;
  rest: SecretShape[];
  items: SecretShape[];
  alts: SecretShape[];
}

const shapes = new WeakMap<object, SecretShape | null>();

/** The secret shape of a tool's input or output schema; null when it declares no secret (most tools). Computed once per schema. */
export function secretShape(schema: JsonSchema | undefined): SecretShape | null {
  if (!schema) return null;
  if (shapes.has(schema)) return shapes.get(schema)!;
  const built = buildShape(schema);
  shapes.set(schema, built);
  return built;
}

function buildShape(root: JsonSchema): SecretShape | null {
  const memo = new Map<object, SecretShape>();
  const all: SecretShape[] = [];
  const resolve = (ref: string): unknown => {
    // Only references inside the document (`#/$defs/block`): a tool's schema is self-contained.
    if (!ref.startsWith('#')) return undefined;
    let node: unknown = root;
    for (const raw of ref.slice(1).split('/').slice(1)) {
      const token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[token] : undefined;
    }
    return node;
  };
  const shapeOf = (schema: unknown): SecretShape | null => {
    if (typeof schema !== 'object' || schema === null) return null;
    const known = memo.get(schema);
    if (known) return known;
    const node: SecretShape = { secret: declaredSecret(schema), props: new Map(), rest: [], items: [], alts: [] };
    memo.set(schema, node);
    all.push(node);
    const s = schema as Record<string, unknown>;
    const add = (into: SecretShape[], sub: unknown) => {
      const child = shapeOf(sub);
      if (child) into.push(child);
    };
    for (const k of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(s[k])) for (const sub of s[k] as unknown[]) add(node.alts, sub);
    for (const k of ['then', 'else']) add(node.alts, s[k]);
    if (typeof s.$ref === 'string') add(node.alts, resolve(s.$ref));
    if (typeof s.properties === 'object' && s.properties !== null) {
      for (const [name, sub] of Object.entries(s.properties as Record<string, unknown>)) {
        const child = shapeOf(sub);
        if (child) node.props.set(name, [...(node.props.get(name) ?? []), child]);
      }
    }
    add(node.rest, s.additionalProperties);
    add(node.rest, s.unevaluatedProperties);
    if (typeof s.patternProperties === 'object' && s.patternProperties !== null) for (const sub of Object.values(s.patternProperties as Record<string, unknown>)) add(node.rest, sub);
    add(node.items, s.items);
    add(node.items, s.contains);
    add(node.items, s.unevaluatedItems);
    if (Array.isArray(s.prefixItems)) for (const sub of s.prefixItems as unknown[]) add(node.items, sub);
    return node;
  };
  const top = shapeOf(root);
  if (!top) return null;
  // Which nodes lead to a secret: a fixpoint, since the graph may have cycles.
  const leads = new Set<SecretShape>(all.filter((n) => n.secret));
  for (let changed = true; changed;) {
    changed = false;
    for (const n of all) {
      if (leads.has(n)) continue;
      const children = [...n.alts, ...n.rest, ...n.items, ...[...n.props.values()].flat()];
      if (children.some((c) => leads.has(c))) {
        leads.add(n);
        changed = true;
      }
    }
  }
  if (!leads.has(top)) return null;
  // Keep only the edges that lead to a secret: the walks below never enter the rest.
  for (const n of all) {
    n.alts = n.alts.filter((c) => leads.has(c));
    n.rest = n.rest.filter((c) => leads.has(c));
    n.items = n.items.filter((c) => leads.has(c));
    for (const [k, v] of n.props) {
      const kept = v.filter((c) => leads.has(c));
      if (kept.length) n.props.set(k, kept);
      else n.props.delete(k);
    }
  }
  return top;
}

/** The nodes that apply at one place: the given ones and every alternative they reach. */
function closure(nodes: readonly SecretShape[]): SecretShape[] {
  const out: SecretShape[] = [];
  const seen = new Set<SecretShape>();
  const stack = [...nodes];
  while (stack.length) {
    const n = stack.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    out.push(n);
    stack.push(...n.alts);
  }
  return out;
}

/**
 * A copy of `value` in which every string standing at a secret place is replaced by
 * `replace(it, its JSON Pointer)`; the rest is shared with `value`, and `value` itself is never
 * changed. Values past the input bounds never reach here (the walk is recursive; a tool's input is
 * at most 32 deep).
 */
export function mapSecrets(value: unknown, shape: SecretShape | null, replace: (secret: string, pointer: string) => unknown): unknown {
  if (!shape) return value;
  const walk = (v: unknown, at: SecretShape[], pointer: string): unknown => {
    const nodes = closure(at);
    if (nodes.length === 0) return v;
    if (typeof v === 'string') return nodes.some((n) => n.secret) ? replace(v, pointer) : v;
    if (Array.isArray(v)) {
      const items = nodes.flatMap((n) => n.items);
      if (items.length === 0) return v;
      let changed = false;
      const out = v.map((item, i) => {
        const next = walk(item, items, `${pointer}/${i}`);
        if (next !== item) changed = true;
        return next;
      });
      return changed ? out : v;
    }
    if (typeof v !== 'object' || v === null) return v;
    const rest = nodes.flatMap((n) => n.rest);
    let out: Record<string, unknown> | null = null;
    for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
      const under = [...rest, ...nodes.flatMap((n) => n.props.get(k) ?? [])];
      if (under.length === 0) continue;
      const next = walk(child, under, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
      if (next !== child) (out ??= { ...(v as Record<string, unknown>) })[k] = next;
    }
    return out ?? v;
  };
  return walk(value, [shape], '');
}

/** The strings standing at secret places of `value`, in document order. */
export function secretsIn(value: unknown, shape: SecretShape | null): string[] {
  const found: string[] = [];
  mapSecrets(value, shape, (s) => {
    found.push(s);
    return s;
  });
  return found;
}

// ------------------------------------------------------------------ the build check

/**
 * Words that name a secret in a field's name (split at `_`, `-` and case changes): a field so
 * named that can hold a free string must be declared secret. `key` counts unless the name says
 * whose or what kind of key it is (below).
 */
export const SECRET_WORDS: ReadonlySet<string> = new Set([
  'pin', 'password', 'passphrase', 'passwd', 'pwd', 'secret', 'token', 'key', 'apikey', 'certificate', 'cert', 'p12', 'pfx', 'pkcs12',
  'credential', 'credentials', 'otp', 'cvv', 'cvc', 'privkey',
]);

/**
 * Last words that make a name a reference to a secret or a fact about it, not the secret itself:
 * `api_key_id`, `token_type`, `key_prefix`, `software_pin_set`, `certificate_expires_at`…
 */
export const NOT_SECRET_LAST_WORDS: ReadonlySet<string> = new Set([
  'id', 'ids', 'set', 'count', 'prefix', 'at', 'name', 'type', 'kind', 'fingerprint', 'digest', 'hash', 'subject', 'issuer',
  'serial', 'status', 'expires', 'expiry', 'length', 'hint', 'scope', 'scopes', 'url', 'uri', 'format',
]);

/**
 * `key` names that are lookup keys, not secrets: a bare `key` (a record's or selector's key, a
 * slug), `idempotency_key` (a request's name, shown in the ledger), `dimension_key`,
 * `document_key` (an e-invoice's CUFE/CUDE: printed on the document and in its QR code),
 * and anything `public_…` (a public key).
 */
export const NOT_SECRET_NAMES: ReadonlySet<string> = new Set(['key', 'idempotency_key', 'dimension_key', 'document_key', 'sort_key', 'group_key']);

/** The words of a field name, lower case: `softwarePin` and `software_pin` → `software`, `pin`. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** Is a field of this name a secret unless shown otherwise (the build's rule)? */
export function namedLikeSecret(name: string): boolean {
  const words = nameWords(name);
  if (words.length === 0) return false;
  const normal = words.join('_');
  if (NOT_SECRET_NAMES.has(normal) || words[0] === 'public') return false;
  if (NOT_SECRET_LAST_WORDS.has(words[words.length - 1])) return false;
  return words.some((w) => SECRET_WORDS.has(w));
}

/** Can a value of this schema be a free string (where a secret could stand)? An enum or a const is a fixed vocabulary, not a secret. */
function mayHoldFreeString(schema: Record<string, unknown>): boolean {
  if ('const' in schema || Array.isArray(schema.enum)) return false;
  const type = schema.type;
  if (type === undefined) {
    // Untyped: a string only if no branch says otherwise and it is not a container.
    const branches = ['anyOf', 'oneOf'].flatMap((k) => (Array.isArray(schema[k]) ? (schema[k] as Record<string, unknown>[]) : []));
    if (branches.length) return branches.some((b) => typeof b === 'object' && b !== null && mayHoldFreeString(b));
    return !('properties' in schema) && !('items' in schema);
  }
  return type === 'string' || (Array.isArray(type) && type.includes('string'));
}

/**
 * Fields named like a secret (see {@link namedLikeSecret}) that can hold a free string and are not
 * declared secret (`writeOnly: true` / `x-secret: true`, on the field or on every string branch of
 * it), at any depth of a schema: each as a JSON Pointer into the schema's instances (`/certificate/password`,
 * `/lines/*\/token`). The build fails on any (scripts/build.ts).
 */
export function undeclaredSecretFields(schema: JsonSchema | undefined): string[] {
  const problems = new Set<string>();
  const seen = new Set<unknown>();
  const visit = (node: unknown, path: string) => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    const s = node as Record<string, unknown>;
    if (typeof s.properties === 'object' && s.properties !== null) {
      for (const [name, sub] of Object.entries(s.properties as Record<string, unknown>)) {
        if (typeof sub !== 'object' || sub === null) continue;
        const at = `${path}/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
        if (namedLikeSecret(name) && unprotectedString(sub as Record<string, unknown>)) problems.add(at);
        visit(sub, at);
      }
    }
    for (const k of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(s[k])) for (const sub of s[k] as unknown[]) visit(sub, path);
    for (const k of ['then', 'else', 'if', 'not']) visit(s[k], path);
    for (const k of ['additionalProperties', 'unevaluatedProperties']) visit(s[k], `${path}/*`);
    if (typeof s.patternProperties === 'object' && s.patternProperties !== null) for (const sub of Object.values(s.patternProperties as Record<string, unknown>)) visit(sub, `${path}/*`);
    for (const k of ['items', 'contains', 'unevaluatedItems']) visit(s[k], `${path}/*`);
    if (Array.isArray(s.prefixItems)) for (const sub of s.prefixItems as unknown[]) visit(sub, `${path}/*`);
    for (const k of ['$defs', 'definitions']) if (typeof s[k] === 'object' && s[k] !== null) for (const sub of Object.values(s[k] as Record<string, unknown>)) visit(sub, `${path}/…`);
  };
  visit(schema, '');
  return [...problems];
}

/** A field schema that can hold a free string with no secret declaration covering it. */
function unprotectedString(schema: Record<string, unknown>): boolean {
  if (declaredSecret(schema)) return false;
  const branches = ['anyOf', 'oneOf'].flatMap((k) => (Array.isArray(schema[k]) ? (schema[k] as Record<string, unknown>[]) : []));
  if (schema.type === undefined && branches.length) return branches.some((b) => typeof b === 'object' && b !== null && unprotectedString(b));
  return mayHoldFreeString(schema);
}

/**
 * The build's check over every tool of the catalog: each field named like a secret, in its input
 * or output schema, is declared secret. Throws naming every one that is not.
 */
export function assertSecretFieldsDeclared(tools: readonly { name: string; input_schema?: JsonSchema; output_schema?: JsonSchema; input?: JsonSchema; output?: JsonSchema }[]): void {
  const problems: string[] = [];
  for (const tool of tools) {
    for (const [side, schema] of [['input', tool.input_schema ?? tool.input], ['output', tool.output_schema ?? tool.output]] as const) {
      for (const field of undeclaredSecretFields(schema)) problems.push(`- ${tool.name} ${side} ${field}`);
    }
  }
  if (problems.length) {
    throw new Error(
      `Fields named like a secret are not declared secret (add "writeOnly": true to an input field, "x-secret": true to an output field; ARCHITECTURE.md "Secrets"):\n${problems.join('\n')}`,
    );
  }
}
