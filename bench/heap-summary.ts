// `node bench/heap-summary.ts <file.heapprofile>… [calls]`: where a V8 sampling heap profile's bytes
// were allocated (the probe's CUADRA_PROBE_HEAP profiles count collected objects too: what was
// allocated, not what stayed), by package/file and by function (self), and by the repository
// function on the stack nearest each allocation (who asked for it), as bytes per call when the
// number of calls is given. Several files (windows of one process) are summed.
import { readFileSync } from 'node:fs';
import { where } from './probe.ts';

interface Frame { functionName: string; url: string; lineNumber: number }
interface HeapNode { callFrame: Frame; selfSize: number; children: HeapNode[] }

const args = process.argv.slice(2);
const calls = /^\d+$/.test(args.at(-1) ?? '') ? Number(args.pop()) : 0;
const groups = new Map<string, number>();
const fns = new Map<string, number>();
const askers = new Map<string, number>();
let total = 0;
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
const name = (f: Frame) => `${f.functionName || '(anonymous)'} ${where(f.url)}:${f.lineNumber + 1}`;
const ours = (f: Frame) => /^(shared|gateway|subgraphs\/[a-z]+)\//.test(where(f.url));

function walk(node: HeapNode, asker: string): void {
  const f = node.callFrame;
  const nearest = ours(f) ? name(f) : asker;
  if (node.selfSize > 0) {
    total += node.selfSize;
    add(groups, where(f.url) || `(native) ${f.functionName || 'anonymous'}`, node.selfSize);
    add(fns, name(f), node.selfSize);
    add(askers, nearest, node.selfSize);
  }
  for (const child of node.children) walk(child, nearest);
}
for (const file of args) walk((JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode }).head, '(no repository frame)');

const fmt = (bytes: number) => (calls ? `${(bytes / calls / 1024).toFixed(1).padStart(8)} KB/call` : `${(bytes / 1048576).toFixed(1).padStart(8)} MB`) + `  ${((100 * bytes) / total).toFixed(1).padStart(5)}%`;
console.log(`${args.join(', ')}: ${(total / 1048576).toFixed(1)} MB allocated (sampled estimate)${calls ? `, ${calls} calls: ${(total / calls / 1024).toFixed(1)} KB/call` : ''}`);
for (const [title, m] of [['by package / file (self)', groups], ['top functions (self)', fns], ['by the nearest repository function on the stack', askers]] as const) {
  console.log(`${title}:`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`  ${fmt(v)}  ${k}`);
}
