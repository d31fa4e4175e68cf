// Where a process's resident memory is, outside V8's own figures: /proc/<pid>/smaps by kind of
// mapping, and (with gdb) how much of it glibc's malloc holds free. Used by bench/soak.ts
// (BENCH_SOAK_NATIVE=1) to tell V8's heap from the C allocator's arenas after a burst of reads.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

export interface NativeBreakdown {
  /** Resident bytes in all, as smaps sums them. */
  rss: number;
  /** glibc's main arena (the `[heap]` of brk). */
  brk: number;
  /** glibc's other arenas: anonymous 64 MB-aligned regions of 64 MB (a heuristic: HEAP_MAX_SIZE on 64-bit). */
  arenas: number;
  /** Every other anonymous mapping: V8's heap pages, malloc's mmapped large chunks, thread stacks. */
  otherAnon: number;
  /** File-backed mappings (the node binary, libraries, the compile cache). */
  file: number;
  /** Pages given back with MADV_FREE that the kernel has not taken yet (still counted in the RSS). */
  lazyFree: number;
}

const ARENA = 64 * 1024 * 1024;

export function nativeBreakdown(pid: number): NativeBreakdown | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return null;
  }
  const maps: { start: number; end: number; perms: string; name: string; rss: number; lazy: number }[] = [];
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      maps.push({ start: Number.parseInt(head[1], 16), end: Number.parseInt(head[2], 16), perms: head[3], name: head[4], rss: 0, lazy: 0 });
      continue;
    }
    const field = /^(Rss|LazyFree):\s+(\d+) kB/.exec(line);
    if (field && maps.length > 0) maps[maps.length - 1][field[1] === 'Rss' ? 'rss' : 'lazy'] = Number(field[2]) * 1024;
  }
  const out: NativeBreakdown = { rss: 0, brk: 0, arenas: 0, otherAnon: 0, file: 0, lazyFree: 0 };
  for (let i = 0; i < maps.length; i++) {
    const m = maps[i];
    out.rss += m.rss;
    out.lazyFree += m.lazy;
    if (m.name === '[heap]') out.brk += m.rss;
    else if (m.name !== '' && !m.name.startsWith('[')) out.file += m.rss;
    else if (m.name !== '') out.otherAnon += m.rss;
    else {
      // An arena's heap: a read-write part at a 64 MB boundary, the rest of its 64 MB reserved (---p) behind it.
      const next = maps[i + 1];
      const reserved = next && next.start === m.end && next.perms === '---p' && next.name === '' ? next.end - next.start : 0;
      const isArena = m.perms === 'rw-p' && m.start % ARENA === 0 && m.end - m.start + reserved === ARENA;
      if (isArena) out.arenas += m.rss;
      else out.otherAnon += m.rss;
    }
  }
  return out;
}

export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * Asks glibc, inside the running process (gdb attaches for ~2 s), what its malloc holds
 * (`malloc_stats()`, written to the process's stderr = `logFile`) and to give back what is free
 * (`malloc_trim(0)`); answers the RSS before and after the trim and malloc's own totals.
 * Null when gdb is missing or cannot attach.
 */
export async function mallocTrim(pid: number, logFile: string): Promise<{ rssBefore: number; rssAfter: number; mallocSystem?: number; mallocInUse?: number } | null> {
  const rssBefore = rssOf(pid);
  const logBefore = existsSync(logFile) ? readFileSync(logFile, 'utf8').length : 0;
  try {
    execFileSync('gdb', ['-p', String(pid), '-batch', '-ex', 'call (void)malloc_stats()', '-ex', 'call (int)malloc_trim(0)'], { stdio: 'ignore', timeout: 60_000 });
  } catch {
    return null;
  }
  const rssAfter = rssOf(pid);
  let mallocSystem: number | undefined;
  let mallocInUse: number | undefined;
  // stderr is piped to the log by this process's event loop: wait for it without blocking that loop.
  for (let i = 0; i < 50 && mallocSystem === undefined; i++) {
    const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(logBefore) : '';
    const m = /Total \(incl\. mmap\):\s*system bytes\s*=\s*(\d+)\s*in use bytes\s*=\s*(\d+)/.exec(tail);
    if (m) {
      mallocSystem = Number(m[1]);
      mallocInUse = Number(m[2]);
    } else await new Promise((r) => setTimeout(r, 100));
  }
  return { rssBefore, rssAfter, mallocSystem, mallocInUse };
}
