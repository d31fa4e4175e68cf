// `node bench/callgrind-summary.ts <calls> <dump> [<calls> <dump>…]`: where a callgrind window's instructions went
// (bench/instructions.ts writes the dumps under test-output/bench/callgrind/), per call, by kind of work — the
// garbage collector, V8's compilers, V8's builtins (the interpreter, inline caches, JSON, strings), the JIT's code (no
// symbol: valgrind sees generated code as `???`), Node's C++ (its HTTP parser, streams, handles), OpenSSL, libuv,
// libc (malloc, memcpy) — so a process's cost can be split into what its heap and threads cost (the collector, the
// compilers) and what its code does per call. Two dumps of one process (windows of N and 2N calls) given as
// `N dumpN 2N dump2N` print the difference too: per call with the window's fixed cost taken out.
import { execFileSync } from 'node:child_process';

const KINDS: [string, RegExp][] = [
  ['garbage collector', /v8::internal::(?:\S*Marking|\S*Marker|\S*Scaveng|Sweeper|Heap::|Heap\b|MarkCompact|\S*Evacuat|\S*Compactor|MinorMS|\S*Worklist|BodyDescriptor|ConcurrentMarking|MemoryAllocator|\S*RememberedSet|SlotSet|TypedSlot|HeapObject::SizeFromMap|\S*Visitor|PagedSpace|NewSpace|SemiSpace|MutablePageMetadata|PageMetadata|FreeList|LocalHeap|GCTracer|IncrementalMarking|ArrayBufferSweeper|StringForwardingTable|ExternalStringTable|Space)|heap::base::|cppgc::|__popcountdi2/],
  ['V8 compilers and parser', /v8::internal::(?:compiler::|maglev::|turboshaft::|baseline::|interpreter::Bytecode|Parser|Scanner|\S*Compil|AstNode|Ast\w|Zone|DeclarationScope|Scope::|PreParser|FeedbackVector|\S*Deoptimiz)|v8::internal::wasm::/],
  ['OpenSSL', /(?:sha\d*_|SHA\d*_|EVP_|HMAC|OPENSSL|CRYPTO_|ossl_|BN_|ecp_|ec_|EC_|bn_|ERR_|OBJ_|ASN1|aesni|poly1305|chacha|RAND_|libcrypto|libssl)/],
  ['HTTP parser (llhttp)', /llhttp|llparse/],
  ['libuv and syscalls', /uv_|uv__|epoll|__libc_(?:read|write|recv|send)|writev|readv|\bsend\b|\brecv\b|syscall/],
  ['libc and allocator', /libc\.so|libstdc\+\+|libgcc|\bmalloc|\bfree\b|\bcalloc|\brealloc|operator new|operator delete|memcpy|memmove|memset|memcmp|strlen|_int_malloc|_int_free|tcache|ld-linux/],
  ['V8 builtins', /Builtins_/],
  ['V8 runtime (C++)', /v8::internal::|v8::(?!internal)/],
  ['Node C++', /node::/],
  ['JIT code (no symbol)', /^\?\?\?:0x|^0x|\?\?\?:\?\?\?/],
];

function byKind(dump: string): { total: number; kinds: Map<string, number> } {
  const text = execFileSync('callgrind_annotate', ['--threshold=100', '--inclusive=no', dump], { maxBuffer: 256 * 1024 * 1024 }).toString();
  const kinds = new Map<string, number>(KINDS.map(([k]) => [k, 0]));
  kinds.set('other', 0);
  let total = 0;
  let inFunctions = false;
  for (const line of text.split('\n')) {
    const totals = /^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?PROGRAM TOTALS/.exec(line);
    if (totals) total = Number(totals[1].replace(/,/g, ''));
    if (/file:function/.test(line)) { inFunctions = true; continue; }
    if (!inFunctions) continue;
    const m = /^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(.*)$/.exec(line);
    if (!m) continue;
    const ir = Number(m[1].replace(/,/g, ''));
    const name = m[2];
    const kind = KINDS.find(([, re]) => re.test(name))?.[0] ?? 'other';
    kinds.set(kind, kinds.get(kind)! + ir);
  }
  const listed = [...kinds.values()].reduce((a, b) => a + b, 0);
  kinds.set('other', kinds.get('other')! + Math.max(0, total - listed));
  return { total, kinds };
}

const args = process.argv.slice(2);
const windows: { calls: number; dump: string; total: number; kinds: Map<string, number> }[] = [];
for (let i = 0; i + 1 < args.length; i += 2) windows.push({ calls: Number(args[i]), dump: args[i + 1], ...byKind(args[i + 1]) });
const k = (n: number) => (n / 1000).toFixed(1).padStart(8);
console.log(`instructions per call, in thousands (callgrind_annotate, self cost by function)`);
console.log(`${'kind'.padEnd(26)} ${windows.map((w, i) => `w${i + 1} (${w.calls})`.padStart(10)).join(' ')}${windows.length === 2 ? '  2N − N per call' : ''}`);
for (const kind of [...KINDS.map(([name]) => name), 'other']) {
  const cells = windows.map((w) => k(w.kinds.get(kind)! / w.calls).padStart(10));
  const diff = windows.length === 2 ? `  ${k((windows[1].kinds.get(kind)! - windows[0].kinds.get(kind)!) / (windows[1].calls - windows[0].calls))}` : '';
  console.log(`${kind.padEnd(26)} ${cells.join(' ')}${diff}`);
}
const diff = windows.length === 2 ? `  ${k((windows[1].total - windows[0].total) / (windows[1].calls - windows[0].calls))}` : '';
console.log(`${'total'.padEnd(26)} ${windows.map((w) => k(w.total / w.calls).padStart(10)).join(' ')}${diff}`);
