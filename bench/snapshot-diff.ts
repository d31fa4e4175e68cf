// `node bench/snapshot-diff.ts <before.heapsnapshot> <after.heapsnapshot> [calls]`: the objects in `after` that were
// not in `before` (V8 keeps an object's snapshot id across snapshots of one process), by constructor / node name
// (count, self bytes, per call when `calls` is given), and for the largest groups who holds them: the retaining
// edge and its holder's name, two levels up. Also used by bench/survivors.ts (summarise / diff by name).
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[]; edges: number[]; strings: string[];
}
export interface Parsed { s: Snapshot; nf: number; ef: number; count: number; types: string[]; etypes: string[]; firstEdge: Int32Array; retainer: Int32Array; retainerEdge: Int32Array; ids: Set<number> }

export function parse(file: string): Parsed {
  const s = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const nf = s.snapshot.meta.node_fields.length;
  const ef = s.snapshot.meta.edge_fields.length;
  const count = s.nodes.length / nf;
  const ecIdx = s.snapshot.meta.node_fields.indexOf('edge_count');
  const firstEdge = new Int32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) { firstEdge[i] = e; e += s.nodes[i * nf + ecIdx] * ef; firstEdge[i + 1] = e; }
  // One retainer per node: the first strong (non-weak) edge found pointing at it.
  const retainer = new Int32Array(count).fill(-1);
  const retainerEdge = new Int32Array(count).fill(-1);
  const etypes = s.snapshot.meta.edge_types[0];
  const weak = etypes.indexOf('weak');
  for (let i = 0; i < count; i++) {
    for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += ef) {
      if (s.edges[e] === weak) continue;
      const to = s.edges[e + 2] / nf;
      if (retainer[to] === -1 && to !== i) { retainer[to] = i; retainerEdge[to] = e; }
    }
  }
  const ids = new Set<number>();
  for (let i = 0; i < count; i++) ids.add(s.nodes[i * nf + 2]);
  return { s, nf, ef, count, types: s.snapshot.meta.node_types[0], etypes, firstEdge, retainer, retainerEdge, ids };
}

const keyOf = (p: Parsed, i: number): string => {
  const type = p.types[p.s.nodes[i * p.nf]];
  const name = p.s.strings[p.s.nodes[i * p.nf + 1]];
  if (type === 'string' || type === 'concatenated string' || type === 'sliced string' || type === 'number' || type === 'bigint') return `(${type})`;
  if (type === 'code') return '(code)';
  return type === 'object' || type === 'closure' || type === 'native' ? `${name.slice(0, 60)} [${type}]` : `${name.slice(0, 60)} (${type})`;
};
const edgeName = (p: Parsed, e: number): string => {
  const t = p.etypes[p.s.edges[e]];
  // Element indices are left out: holders are grouped by kind of path, not by slot.
  return t === 'element' || t === 'hidden' ? '[]' : `.${p.s.strings[p.s.edges[e + 1]]}`;
};

export interface Summary { count: Map<string, number>; bytes: Map<string, number>; total: number }
export function summarise(file: string | Parsed): Summary {
  const p = typeof file === 'string' ? parse(file) : file;
  const count = new Map<string, number>();
  const bytes = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < p.count; i++) {
    const k = keyOf(p, i);
    const b = p.s.nodes[i * p.nf + 3];
    count.set(k, (count.get(k) ?? 0) + 1);
    bytes.set(k, (bytes.get(k) ?? 0) + b);
    total += b;
  }
  return { count, bytes, total };
}

export function diff(a: Summary, b: Summary, title: string, top = 25): void {
  console.log(`\n${title}: ${((b.total - a.total) / 1048576).toFixed(2)} MB (${(a.total / 1048576).toFixed(1)} → ${(b.total / 1048576).toFixed(1)} MB)`);
  const keys = new Set([...a.bytes.keys(), ...b.bytes.keys()]);
  const rows = [...keys].map((k) => ({ k, dn: (b.count.get(k) ?? 0) - (a.count.get(k) ?? 0), db: (b.bytes.get(k) ?? 0) - (a.bytes.get(k) ?? 0) }));
  for (const r of rows.sort((x, y) => Math.abs(y.db) - Math.abs(x.db)).slice(0, top)) console.log(`  ${String(r.dn).padStart(8)} objects ${(r.db / 1024).toFixed(1).padStart(10)} KB  ${r.k}`);
}

/** Objects of `after` not in `before`, by name, and the holders of the largest groups. */
export function fresh(before: Parsed, after: Parsed, calls = 0, top = 30): void {
  const count = new Map<string, number>();
  const bytes = new Map<string, number>();
  const holders = new Map<string, Map<string, number>>();
  let total = 0;
  let n = 0;
  for (let i = 0; i < after.count; i++) {
    if (before.ids.has(after.s.nodes[i * after.nf + 2])) continue;
    const k = keyOf(after, i);
    const b = after.s.nodes[i * after.nf + 3];
    n++;
    total += b;
    count.set(k, (count.get(k) ?? 0) + 1);
    bytes.set(k, (bytes.get(k) ?? 0) + b);
    // Two levels of holders: edge ← holder ← its holder.
    let path = '';
    let j = i;
    for (let level = 0; level < 3 && after.retainer[j] !== -1; level++) {
      path += ` ${edgeName(after, after.retainerEdge[j])} ← ${keyOf(after, after.retainer[j])}`;
      j = after.retainer[j];
    }
    const h = holders.get(k) ?? new Map<string, number>();
    h.set(path, (h.get(path) ?? 0) + b);
    holders.set(k, h);
  }
  const per = (x: number) => (calls ? `${(x / calls).toFixed(1).padStart(8)} B/call` : `${(x / 1024).toFixed(1).padStart(9)} KB`);
  console.log(`new objects: ${n}, ${(total / 1048576).toFixed(2)} MB${calls ? `, ${(total / calls).toFixed(0)} B per call` : ''}`);
  for (const [k, b] of [...bytes].sort((x, y) => y[1] - x[1]).slice(0, top)) {
    console.log(`  ${String(count.get(k)).padStart(8)} ${per(b)}  ${k}`);
    for (const [hp, hb] of [...holders.get(k)!].sort((x, y) => y[1] - x[1]).slice(0, 3)) console.log(`        ${per(hb)} ${hp}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [a, b, calls] = process.argv.slice(2);
  const pa = parse(a);
  const pb = parse(b);
  diff(summarise(pa), summarise(pb), `${b} − ${a}`);
  console.log();
  fresh(pa, pb, Number(calls ?? 0));
}
