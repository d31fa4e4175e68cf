import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CatalogEntry, JsonSchema } from '@cuadra/shared';
import { CURRENT_API_VERSION } from './dates.ts';

/** What callers depend on of one tool: the public part of its catalog entry. */
export interface ToolShape {
  module: string;
  risk: string;
  scope: string;
  input_schema: JsonSchema;
  output_schema?: JsonSchema;
  deprecated?: unknown;
}
/** Every tool's shape by name, sorted: the committed snapshot the changelog is written against. */
export type SchemaSnapshot = Record<string, ToolShape>;

/** One change of the public tool schemas between two snapshots. */
export interface SchemaChange {
  tool: string;
  /** JSON Pointer into the tool's shape (`/input_schema/properties/due_date`), `""` for the whole tool. */
  at: string;
  kind: 'added' | 'removed' | 'changed';
  /** True when a caller written against the previous shape can be refused or misread now. */
  breaking: boolean;
}

/** The snapshot of a catalog. */
export function schemaSnapshot(entries: readonly CatalogEntry[]): SchemaSnapshot {
  const out: SchemaSnapshot = {};
  for (const e of [...entries].sort((a, b) => a.name.localeCompare(b.name))) {
    out[e.name] = {
      module: e.module, risk: e.risk, scope: e.scope, input_schema: e.input_schema,
      ...(e.output_schema ? { output_schema: e.output_schema } : {}),
      ...(e.deprecated ? { deprecated: e.deprecated } : {}),
    };
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
/** Words for people (and models) that change nothing a program checks. */
const WORDS = new Set(['description', 'title', 'examples', '$comment']);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The changes of one schema, walked property by property. Which are breaking depends on the side:
 * in an input (`input`), a new required property, a removed property (an `additionalProperties:
 * false` object refuses it now) or any other change of a constraint breaks a caller, a new optional
 * property does not; in an output, a removed property or a changed one breaks a reader, a new one
 * does not. A change of words only (description, title, examples) is not listed.
 */
function diffSchema(tool: string, at: string, before: unknown, after: unknown, side: 'input' | 'output', out: SchemaChange[]): void {
  if (same(before, after)) return;
  if (!isObject(before) || !isObject(after)) {
    out.push({ tool, at, kind: 'changed', breaking: true });
    return;
  }
  const props = (s: Record<string, unknown>) => (isObject(s.properties) ? s.properties : {});
  const required = (s: Record<string, unknown>) => new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const [pb, pa, rb, ra] = [props(before), props(after), required(before), required(after)];
  for (const name of Object.keys(pa)) {
    const where = `${at}/properties/${escape(name)}`;
    if (!(name in pb)) out.push({ tool, at: where, kind: 'added', breaking: side === 'input' && ra.has(name) });
    else diffSchema(tool, where, pb[name], pa[name], side, out);
  }
  for (const name of Object.keys(pb)) if (!(name in pa)) out.push({ tool, at: `${at}/properties/${escape(name)}`, kind: 'removed', breaking: true });
  // A property that becomes required (input) or optional (output) breaks; the reverse does not.
  for (const name of Object.keys(pa)) {
    if (!(name in pb)) continue;
    if (side === 'input' && ra.has(name) && !rb.has(name)) out.push({ tool, at: `${at}/required/${escape(name)}`, kind: 'added', breaking: true });
    if (side === 'output' && rb.has(name) && !ra.has(name)) out.push({ tool, at: `${at}/required/${escape(name)}`, kind: 'removed', breaking: true });
  }
  // Every other keyword: a changed constraint (type, enum, pattern, bounds, items…).
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (key === 'properties' || key === 'required' || WORDS.has(key) || same(before[key], after[key])) continue;
    if (isObject(before[key]) && isObject(after[key]) && (key === 'items' || key === 'additionalProperties')) {
      diffSchema(tool, `${at}/${key}`, before[key], after[key], side, out);
      continue;
    }
    out.push({ tool, at: `${at}/${escape(key)}`, kind: key in before ? (key in after ? 'changed' : 'removed') : 'added', breaking: true });
  }
}

/** The changes from `previous` to `current`, tool by tool in name order. */
export function diffSnapshots(previous: SchemaSnapshot, current: SchemaSnapshot): SchemaChange[] {
  const out: SchemaChange[] = [];
  for (const tool of [...new Set([...Object.keys(previous), ...Object.keys(current)])].sort()) {
    const [b, a] = [previous[tool], current[tool]];
    if (!b) out.push({ tool, at: '', kind: 'added', breaking: false });
    else if (!a) out.push({ tool, at: '', kind: 'removed', breaking: true });
    else {
      for (const key of ['module', 'risk', 'scope'] as const) if (b[key] !== a[key]) out.push({ tool, at: `/${key}`, kind: 'changed', breaking: true });
      if (!same(b.deprecated, a.deprecated)) out.push({ tool, at: '/deprecated', kind: a.deprecated ? (b.deprecated ? 'changed' : 'added') : 'removed', breaking: false });
      diffSchema(tool, '/input_schema', b.input_schema, a.input_schema, 'input', out);
      diffSchema(tool, '/output_schema', b.output_schema ?? {}, a.output_schema ?? {}, 'output', out);
    }
  }
  return out;
}

/** A dated changelog section for `changes`. */
export function changelogSection(changes: readonly SchemaChange[], date: string, version: string = CURRENT_API_VERSION): string {
  const line = (c: SchemaChange) => `- ${c.breaking ? '**breaking** ' : ''}\`${c.tool}\` ${c.at ? `\`${c.at}\` ` : ''}${c.kind}`;
  return `## ${date} (Cuadra-Version ${version})\n\n${changes.map(line).join('\n')}\n`;
}

const HEADER = '# Tool schema changelog\n\nEvery change of a tool\'s public shape (input and output schemas, risk, scope, deprecation), written by\n`npm run build` from the catalog against the committed snapshot (`snapshot.json` beside this file), newest first.\nA **breaking** change can refuse or mislead a caller written against the shape before it.\n';

/**
 * Compares the catalog with the committed snapshot in `dir` and, when anything changed, writes a
 * dated section at the top of `dir/CHANGELOG.md` and the new snapshot (both committed: a test fails
 * while the snapshot differs from the catalog). Answers the changes recorded (none: nothing written).
 */
export function recordSchemaChanges(entries: readonly CatalogEntry[], dir: string, date = new Date().toISOString().slice(0, 10)): SchemaChange[] {
  const snapshotFile = path.join(dir, 'snapshot.json');
  const changelogFile = path.join(dir, 'CHANGELOG.md');
  const current = schemaSnapshot(entries);
  const previous = existsSync(snapshotFile) ? (JSON.parse(readFileSync(snapshotFile, 'utf8')) as SchemaSnapshot) : null;
  const changes = previous ? diffSnapshots(previous, current) : [];
  if (previous && changes.length === 0) return [];
  mkdirSync(dir, { recursive: true });
  const before = existsSync(changelogFile) ? readFileSync(changelogFile, 'utf8').replace(HEADER, '').trimStart() : '';
  const section = previous ? changelogSection(changes, date) : `## ${date} (Cuadra-Version ${CURRENT_API_VERSION})\n\n- The first snapshot: ${Object.keys(current).length} tools.\n`;
  writeFileSync(changelogFile, `${HEADER}\n${section}${before ? `\n${before}` : ''}`);
  writeFileSync(snapshotFile, `${JSON.stringify(current, null, 2)}\n`);
  return changes;
}
