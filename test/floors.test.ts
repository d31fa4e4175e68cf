import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// The floors (ARCHITECTURE.md, "The finance kernel"): the rules are in .dependency-cruiser.json and
// dependency-cruiser reads the import graph; this is the check `npm test` runs.
const ROOT = fileURLToPath(new URL('..', import.meta.url));
// Run by this process's node (the project's, 24): the one first on PATH may be older than the tool supports.
const DEPCRUISE = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');
const CONFIG = join(ROOT, '.dependency-cruiser.json');
const run = promisify(execFile);

interface Violation { rule: { name: string; severity: string }; from: string; to: string }

/**
 * Runs the floors' check over the product code in `cwd` (every subgraph's, shared's and the
 * gateway's `src`): the violations that count (severity `error`). Nothing is waived: there is no
 * baseline of known violations to ignore.
 */
async function check(cwd: string): Promise<Violation[]> {
  const sources = [...readdirSync(join(cwd, 'subgraphs')).map((s) => `subgraphs/${s}/src`), 'shared/src', 'gateway/src'].filter((d) => existsSync(join(cwd, d)));
  const args = ['--config', CONFIG, '--output-type', 'json', ...sources];
  const { stdout } = await run(process.execPath, [DEPCRUISE, ...args], { cwd, maxBuffer: 64 << 20 });
  const { summary } = JSON.parse(stdout) as { summary: { error: number; violations: Violation[] } };
  const errors = summary.violations.filter((v) => v.rule.severity === 'error');
  expect(errors).toHaveLength(summary.error);
  return errors;
}

/** The violations the check finds in a throw-away tree of the given files. */
async function checkTree(files: Record<string, string>): Promise<Violation[]> {
  const dir = mkdtempSync(join(tmpdir(), 'floors-'));
  try {
    const file = (path: string, text: string) => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    file('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'nodenext', allowImportingTsExtensions: true, noEmit: true } }));
    for (const [path, text] of Object.entries(files)) file(path, text);
    return await check(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the floors', () => {
  it('hold in the tree, with nothing waived: the books import no module, the open-item floor imports no module, no subgraph imports another or the gateway, shared imports no service', async () => {
    expect(await check(ROOT)).toEqual([]);
    // No baseline of known violations: one would let dependency-cruiser's --ignore-known pass an import the rules forbid.
    expect(readdirSync(ROOT).filter((f) => f.startsWith('.dependency-cruiser') && f !== '.dependency-cruiser.json')).toEqual([]);
  }, 60_000);

  it('fail on a violating import, naming the rule, the importer and the imported', async () => {
    const violations = await checkTree({
      'subgraphs/invoices/src/modules/invoices/model.ts': 'export const invoice = 1;\n',
      'subgraphs/invoices/src/books/journal.ts': "import { invoice } from '../modules/invoices/model.ts';\nexport const entry = invoice;\n",
      'subgraphs/invoices/src/lib/invoice-ops.ts': "import { invoice } from '../modules/invoices/model.ts';\nexport const post = invoice;\n",
      'subgraphs/crm/src/deals.ts': "import { entry } from '../../invoices/src/books/journal.ts';\nimport { route } from '../../../gateway/src/rest.ts';\nexport const deal = entry + route;\n",
      'gateway/src/rest.ts': 'export const route = 1;\n',
      'shared/src/tool.ts': "import { deal } from '../../subgraphs/crm/src/deals.ts';\nexport const tool = deal;\n",
    });
    expect(violations.map((v) => [v.rule.name, v.from, v.to]).sort()).toEqual([
      ['books-import-no-module', 'subgraphs/invoices/src/books/journal.ts', 'subgraphs/invoices/src/modules/invoices/model.ts'],
      ['lower-floor-imports-no-module', 'subgraphs/invoices/src/lib/invoice-ops.ts', 'subgraphs/invoices/src/modules/invoices/model.ts'],
      ['no-subgraph-imports-another', 'subgraphs/crm/src/deals.ts', 'subgraphs/invoices/src/books/journal.ts'],
      ['no-subgraph-imports-the-gateway', 'subgraphs/crm/src/deals.ts', 'gateway/src/rest.ts'],
      ['shared-imports-no-service', 'shared/src/tool.ts', 'subgraphs/crm/src/deals.ts'],
    ]);
  }, 60_000);

  it('keep the open-item engine between the books and the modules: it imports no module, and the books do not import it', async () => {
    const violations = await checkTree({
      'subgraphs/invoices/src/modules/bills/model.ts': 'export const bill = 1;\n',
      'subgraphs/invoices/src/open-items/item.ts': "import { bill } from '../modules/bills/model.ts';\nexport const item = bill;\n",
      'subgraphs/invoices/src/books/post.ts': "import { item } from '../open-items/item.ts';\nexport const posted = item;\n",
    });
    expect(violations.map((v) => [v.rule.name, v.from, v.to]).sort()).toEqual([
      ['books-import-no-module', 'subgraphs/invoices/src/books/post.ts', 'subgraphs/invoices/src/open-items/item.ts'],
      ['lower-floor-imports-no-module', 'subgraphs/invoices/src/open-items/item.ts', 'subgraphs/invoices/src/modules/bills/model.ts'],
    ]);
  }, 60_000);
});
