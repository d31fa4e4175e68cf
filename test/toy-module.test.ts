import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../scripts/infra.ts';
import { copyProduct } from './helpers/product-copy.ts';

// "A module is declared once" (issue 15), checked end to end: a temporary copy of the product
// gets a toy module — its own folder (test/fixtures/toy-module/toys) plus its name in the crm
// subgraph's module list, nothing else — is built (supergraph + catalog) and started, and its
// tool, records source and metric are served by REST, records.list, metrics.query and OpenAPI.
const tmp = path.join(process.env.CUADRA_TEST_OUTPUT ?? path.join(repoRoot, 'test-output'), `toy-build-${randomBytes(3).toString('hex')}`);
let sys: any;
let key: string;
let changedOutside: string[] = [];

/** Every file of a tree with its contents, to tell what the toy changed. */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      // A link (a workspace's own node_modules) points back into the checkout: not the copy's.
      if (e.isSymbolicLink()) continue;
      if (e.isDirectory()) walk(p);
      else out.set(path.relative(root, p), readFileSync(p, 'utf8'));
    }
  };
  walk(root);
  return out;
}

beforeAll(async () => {
  copyProduct(tmp, { tests: true });
  // Every name of the specification's lists is answered by some module of the product, so the copy is
  // a deployment that runs only the subgraphs the toy's checks reach — crm (the toy's own) and agents
  // (the ledger's tools) — behind its gateway, as one that does not run the others: inventory's names
  // are then ones no module answers — the toy claims two of them, the others stay "not available yet".
  // (Four processes fewer to start from the copy than the whole product, ~2 CPU-seconds each.)
  const subgraphList = path.join(tmp, 'gateway/src/subgraphs.ts');
  writeFileSync(subgraphList, readFileSync(subgraphList, 'utf8').replace(/^\s*\{ name: '(?!crm'|agents')\w+',.*\n/gm, ''));
  for (const name of readdirSync(path.join(tmp, 'subgraphs'))) if (name !== 'crm' && name !== 'agents') rmSync(path.join(tmp, 'subgraphs', name), { recursive: true, force: true });
  const before = snapshot(path.join(tmp, 'subgraphs'));
  // The module author's whole change: the folder, and one name in the subgraph's module list.
  cpSync(path.join(repoRoot, 'test/fixtures/toy-module/toys'), path.join(tmp, 'subgraphs/crm/src/modules/toys'), { recursive: true });
  const list = path.join(tmp, 'subgraphs/crm/src/modules/index.ts');
  const text = readFileSync(list, 'utf8');
  writeFileSync(list, `import { toysModule } from './toys/index.ts';\n${text.replace('[partiesModule', '[partiesModule, toysModule')}`);
  const after = snapshot(path.join(tmp, 'subgraphs'));
  changedOutside = [...after.keys()].filter((f) => !f.startsWith('crm/src/modules/toys/') && before.get(f) !== after.get(f));
  execFileSync(process.execPath, ['scripts/build.ts'], { cwd: tmp, stdio: 'pipe' });
  const { startTestSystem } = await import(path.join(tmp, 'test/helpers/system.ts'));
  sys = await startTestSystem('toy');
  key = (await sys.workspace('Juguetería')).api_key;
}, 240_000);

afterAll(async () => {
  await sys?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe('a toy module added in its own folder', () => {
  it('touched one file outside its folder: the subgraph module list', () => {
    expect(changedOutside).toEqual(['crm/src/modules/index.ts']);
  });

  it('its tool is in /v1/tools with both schemas, and runs through the pipeline into the ledger', async () => {
    const tools = await sys.fetch('/v1/tools', { key });
    const toy = tools.body.tools.find((t: { name: string }) => t.name === 'toys.make');
    expect(toy).toMatchObject({ module: 'toys', risk: 'write', input_schema: { required: ['name'] }, output_schema: { required: ['toy'] } });
    const made = await sys.invoke('toys.make', { name: 'Trompo' }, key);
    expect(made.status).toBe(200);
    expect(made.body.output.toy).toMatchObject({ name: 'Trompo', status: 'active' });
    const refused = await sys.invoke('toys.make', { name: '' }, key);
    expect(refused.body).toMatchObject({ code: 'invalid_input', field: '/name' });
    const ledger = await sys.invoke('ledger.list', { tool: 'toys.make' }, key);
    expect(ledger.status).toBe(200);
    expect(ledger.body.output.rows.some((r: { tool: string }) => r.tool === 'toys.make')).toBe(true);
  });

  it('its source answers records.list, named in the tool description; its metric answers metrics.query', async () => {
    await sys.invoke('toys.make', { name: 'Balero' }, key);
    const records = await sys.invoke('records.list', { source: 'warehouses', search: 'bal' }, key);
    expect(records.status).toBe(200);
    expect(records.body.output.rows.map((r: { name: string }) => r.name)).toEqual(['Balero']);
    const all = await sys.invoke('records.list', { source: 'warehouses' }, key);
    expect(all.body.output).toMatchObject({ source: 'warehouses', total: 2 });
    const badStatus = await sys.invoke('records.list', { source: 'warehouses', status: 'lost' }, key);
    expect(badStatus.body).toMatchObject({ code: 'invalid_input', field: '/status' });
    const metric = await sys.invoke('metrics.query', { metric: 'inventory_value' }, key);
    expect(metric.status).toBe(200);
    expect(metric.body.output).toMatchObject({ metric: 'inventory_value', unit: 'count', summary: { value: 2 } });
    const tools = await sys.fetch('/v1/tools', { key });
    const describe = (name: string) => tools.body.tools.find((t: { name: string }) => t.name === name).description as string;
    expect(describe('records.list')).toMatch(/\bwarehouses\b/);
    expect(describe('metrics.query')).toMatch(/\binventory_value\b/);
    // What no module of this build answers is named as such (404 not_found, "not available yet").
    const unanswered = await sys.invoke('records.list', { source: 'stock_levels' }, key);
    expect(unanswered.status).toBe(404);
    expect(unanswered.body).toMatchObject({ code: 'not_found' });
    expect(unanswered.body.error).toMatch(/stock_levels.*not available yet/);
  });

  it('another workspace sees none of its toys', async () => {
    const other = (await sys.workspace('Otra')).api_key;
    const records = await sys.invoke('records.list', { source: 'warehouses' }, other);
    expect(records.body.output).toMatchObject({ rows: [], total: 0 });
  });

  it('OpenAPI documents its tool with its schemas', async () => {
    const doc = await sys.fetch('/openapi.json');
    const paths = Object.keys(doc.body.paths);
    const toyPath = paths.find((p) => p.includes('toys.make'));
    expect(toyPath).toBeDefined();
    expect(JSON.stringify(doc.body.paths[toyPath!])).toContain('"toy"');
  });
});
