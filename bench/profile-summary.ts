// `node bench/profile-summary.ts <file.cpuprofile> [calls]`: where a V8 CPU profile's time went,
// by package/file (self time) and by function, as µs per call when the number of calls is given.
import { readFileSync } from 'node:fs';
import { where } from './probe.ts';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

const [file, callsArg] = process.argv.slice(2);
const calls = Number(callsArg ?? 0);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

const groups = new Map<string, number>();
const fns = new Map<string, number>();
let total = 0;
let busy = 0;
for (const [id, us] of self) {
  const n = byId.get(id)!;
  const f = n.callFrame;
  total += us;
  const special = f.functionName.startsWith('(') && !f.url;
  const g = special ? f.functionName : where(f.url) || `(native) ${f.functionName || 'anonymous'}`;
  // The profiler's own stop call (the end of the probe's window) is not the service's work.
  if (g === 'node:inspector') continue;
  if (g !== '(idle)') busy += us;
  groups.set(g, (groups.get(g) ?? 0) + us);
  const key = `${f.functionName || '(anonymous)'} ${where(f.url)}:${f.lineNumber + 1}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
}
/** The layer a package or file belongs to, for the per-layer table of bench/PROFILE.md. */
function layerOf(g: string): string {
  if (/^(mongodb|bson|mongoose|mquery|mpath|kareem|sift)$/.test(g)) return 'MongoDB driver (mongodb, bson, mongoose)';
  if (/^(@apollo\/|graphql|@as-integrations|@graphql-tools|graphql-type-json|lru-cache)/.test(g) || g === 'node:url') return 'GraphQL (Apollo, graphql-js)';
  if (/^(undici|node:_http|node:net|node:internal\/streams|node:internal\/stream_base|node:stream|\(native\) (writev|writeUtf8String|writeBuffer|writeLatin1String))/.test(g)) return 'HTTP and sockets (node:http, undici, streams)';
  if (/^(express|router|body-parser|raw-body|content-type|type-is|on-finished|finalhandler|send|depd|qs|path-to-regexp|parseurl|media-typer|mime)/.test(g)) return 'express';
  if (/^(jsonwebtoken|jws|jwa|ecdsa-sig-formatter|semver)$/.test(g) || g.endsWith('credentials.ts') || g.endsWith('peers.ts')) return 'JWT (assertions)';
  if (g === 'etag') return 'ETag (SHA-1 of each answer)';
  if (g === 'ioredis' || g === 'redis-parser' || g === 'rate-limiter-flexible' || g.endsWith('ratelimit.ts')) return 'Redis client, rate limit';
  if (/^(ajv|fast-uri|fast-deep-equal)/.test(g) || g.endsWith('validation.ts') || g.endsWith('bounds.ts')) return 'validation (ajv, bounds)';
  if (g.startsWith('shared/governance/') || g.endsWith('owner.ts') || g === 'node:internal/crypto/hash' || g === 'node:crypto') return 'governance (owner, ledger, digest, hashing)';
  if (g === '(garbage collector)') return 'garbage collector';
  if (g.startsWith('gateway/')) return 'gateway code';
  if (g.startsWith('subgraphs/') || g.endsWith('paging.ts') || g.endsWith('standard-tools.ts')) return 'tool handler (paging, view)';
  return 'other (runtime: microtasks, timers, events, program)';
}
const layers = new Map<string, number>();
for (const [g, us] of groups) if (g !== '(idle)') layers.set(layerOf(g), (layers.get(layerOf(g)) ?? 0) + us);

const fmt = (us: number) => (calls ? `${(us / calls).toFixed(1).padStart(7)} µs/call` : `${(us / 1000).toFixed(0).padStart(7)} ms`) + `  ${((100 * us) / busy).toFixed(1).padStart(5)}%`;
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled, ${(busy / 1000).toFixed(0)} ms not idle${calls ? `, ${calls} calls: ${(busy / calls).toFixed(0)} µs/call busy` : ''}`);
console.log('self time by layer:');
for (const [g, us] of [...layers].sort((a, b) => b[1] - a[1])) console.log(`  ${fmt(us)}  ${g}`);
console.log('self time by package / file:');
for (const [g, us] of [...groups].filter(([g]) => g !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${fmt(us)}  ${g}`);
console.log('top functions (self):');
for (const [k, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, 25)) if (!k.startsWith('(idle)')) console.log(`  ${fmt(us)}  ${k}`);
