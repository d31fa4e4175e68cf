// The holiday database is loaded at the first question, not when a service imports the shared library
// (mem13, issue 33 "Memory": every country's rules and their parser, 8.7 MB of V8 heap, were kept by the
// gateway and four other services that never ask). A real child process records every module it loads.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const shared = new URL('../src/index.ts', import.meta.url).href;

describe('the holiday database', () => {
  it('is not loaded by importing the shared library, and is by the first question', async () => {
    const script = `
      import { registerHooks } from 'node:module';
      const loaded = new Set();
      registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); loaded.add(r.url); return r; } });
      const holidays = () => [...loaded].filter((u) => u.includes('/node_modules/date-holidays/')).length;
      const { colombianHolidays } = await import(${JSON.stringify(shared)});
      const atImport = holidays();
      const days = colombianHolidays(2026).length;
      console.log(JSON.stringify({ atImport, afterQuestion: holidays(), days }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: path.dirname(new URL(import.meta.url).pathname), timeout: 60_000 });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as { atImport: number; afterQuestion: number; days: number };
    expect(out.atImport).toBe(0);
    expect(out.afterQuestion).toBeGreaterThan(0);
    expect(out.days).toBe(19);
  });
});
