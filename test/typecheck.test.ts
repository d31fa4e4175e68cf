import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

// `npm test` checks the tree's types with tsgo (scripts/test.ts), not tsc: a fresh clone's check costs
// ~13 CPU-seconds instead of ~40 on a CPU-bound run. This holds it to tsc, the reference (`npm run
// typecheck`): on a program broken on purpose in every way our settings refuse (test/fixtures/
// typecheck-broken, with tsconfig.json's options), both report exactly the marked errors — the same
// lines, the same codes. Columns and wording may differ (tsgo orders a union's members otherwise), so
// they are not compared.

const root = path.resolve(import.meta.dirname, '..');
const fixture = path.join('test', 'fixtures', 'typecheck-broken');

/** Runs a checker on the broken program and answers its errors as `file:line TScode` (sorted). */
async function errorsOf(cli: string): Promise<string[]> {
  const ran = await promisify(execFile)(process.execPath, [path.join(root, 'node_modules', cli), '-p', path.join(fixture, 'tsconfig.json')], { cwd: root })
    .then(() => ({ stdout: '' }), (failed: { stdout: string }) => failed);
  return ran.stdout.split('\n').filter((line) => line.includes(': error TS')).map((line) => {
    const [, file, row, code] = /^(.+?)\((\d+),\d+\): error (TS\d+):/.exec(line)!;
    return `${path.basename(file!)}:${row} ${code}`;
  }).sort();
}

it('tsgo (npm test\'s type check) reports the same errors as tsc on a program broken on purpose: every marked line, nothing else', async () => {
  const [tsc, tsgo] = await Promise.all([errorsOf('typescript/bin/tsc'), errorsOf('@typescript/native-preview/bin/tsgo')]);
  // Every line marked `// error:` in the fixture, and no other line, carries at least one error.
  const marked = readFileSync(path.join(root, fixture, 'broken.ts'), 'utf8').split('\n').flatMap((line, i) => (line.includes('// error:') ? [`broken.ts:${i + 1}`] : []));
  expect(marked).toHaveLength(15);
  expect([...new Set(tsc.map((e) => e.split(' ')[0]))].sort()).toEqual([...marked].sort());
  expect(tsgo).toEqual(tsc);
});
