import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CatalogEntry } from '@cuadra/shared';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog.ts';
import { diffSnapshots, recordSchemaChanges, schemaSnapshot } from '../src/versions/schema-changes.ts';

// Issue 39, versions: a changelog of tool-schema changes, generated from the catalog by the build
// and diffed against the committed previous snapshot.

const entries = Catalog.fromBuild().entries;
const committed = new URL('../tool-schemas/', import.meta.url);

describe('the committed tool-schema snapshot', () => {
  it('is the catalog the build made: every schema change is in gateway/tool-schemas/CHANGELOG.md (else run `npm run build` and commit gateway/tool-schemas/)', () => {
    const snapshot = JSON.parse(readFileSync(new URL('snapshot.json', committed), 'utf8'));
    const pending = diffSnapshots(snapshot, schemaSnapshot(entries));
    expect(pending, 'the catalog changed since the committed snapshot: run `npm run build` and commit gateway/tool-schemas/').toEqual([]);
    expect(readFileSync(new URL('CHANGELOG.md', committed), 'utf8')).toMatch(/^# Tool schema changelog\n/);
  });
});

/** A catalog entry for the examples (only what the snapshot reads matters). */
function entry(name: string, input: Record<string, unknown>, output?: Record<string, unknown>, more: Partial<CatalogEntry> = {}): CatalogEntry {
  return { name, description: name, module: name.split('.')[0], risk: 'write', scope: 'tools', input_schema: input, ...(output ? { output_schema: output } : {}), annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }, subgraph: 'x', max_input_bytes: 1, ...more };
}

const obj = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', additionalProperties: false, required, properties });

describe('diffSnapshots', () => {
  const before = schemaSnapshot([
    entry('invoices.post', obj({ id: { type: 'string' }, note: { type: 'string' } }, ['id']), obj({ status: { enum: ['draft', 'posted'] }, total: { type: 'integer' } }, ['status', 'total'])),
    entry('parties.list', obj({ limit: { type: 'integer', maximum: 100 } })),
    entry('old.tool', obj({})),
  ]);

  it('lists added and removed tools, input and output properties, and classes each as breaking or not', () => {
    const after = schemaSnapshot([
      entry('invoices.post',
        // note removed (breaking), memo added optional (not), id's description only (not listed), a new required date (breaking)
        obj({ id: { type: 'string', description: 'The invoice.' }, memo: { type: 'string' }, date: { type: 'string' } }, ['id', 'date']),
        // status gains a value (a changed constraint: breaking for readers that switch on it), total removed (breaking), paid added (not)
        obj({ status: { enum: ['draft', 'posted', 'void'] }, paid: { type: 'boolean' } }, ['status'])),
      entry('parties.list', obj({ limit: { type: 'integer', maximum: 500 } })),
      entry('new.tool', obj({})),
    ]);
    expect(diffSnapshots(before, after)).toEqual([
      { tool: 'invoices.post', at: '/input_schema/properties/memo', kind: 'added', breaking: false },
      { tool: 'invoices.post', at: '/input_schema/properties/date', kind: 'added', breaking: true },
      { tool: 'invoices.post', at: '/input_schema/properties/note', kind: 'removed', breaking: true },
      { tool: 'invoices.post', at: '/output_schema/properties/status/enum', kind: 'changed', breaking: true },
      { tool: 'invoices.post', at: '/output_schema/properties/paid', kind: 'added', breaking: false },
      { tool: 'invoices.post', at: '/output_schema/properties/total', kind: 'removed', breaking: true },
      { tool: 'new.tool', at: '', kind: 'added', breaking: false },
      { tool: 'old.tool', at: '', kind: 'removed', breaking: true },
      { tool: 'parties.list', at: '/input_schema/properties/limit/maximum', kind: 'changed', breaking: true },
    ]);
  });

  it('a change of words only is no change; a deprecation and a changed risk are', () => {
    const words = schemaSnapshot([
      entry('invoices.post', obj({ id: { type: 'string', title: 'Id' }, note: { type: 'string', description: 'x' } }, ['id']), obj({ status: { enum: ['draft', 'posted'] }, total: { type: 'integer', description: 'In minor units.' } }, ['status', 'total'])),
      entry('parties.list', obj({ limit: { type: 'integer', maximum: 100 } })),
      entry('old.tool', obj({}), undefined, { deprecated: { since: '2026-12-01' } }),
    ]);
    expect(diffSnapshots(before, words)).toEqual([{ tool: 'old.tool', at: '/deprecated', kind: 'added', breaking: false }]);
    const risk = schemaSnapshot([entry('parties.list', obj({ limit: { type: 'integer', maximum: 100 } }), undefined, { risk: 'destructive' })]);
    expect(diffSnapshots({ 'parties.list': before['parties.list'] }, risk)).toEqual([{ tool: 'parties.list', at: '/risk', kind: 'changed', breaking: true }]);
  });
});

describe('recordSchemaChanges (what `npm run build` runs)', () => {
  it('writes the first snapshot, then a dated section per change on top of the changelog, and nothing when nothing changed', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tool-schemas-'));
    try {
      const first = [entry('parties.list', obj({ limit: { type: 'integer' } }))];
      expect(recordSchemaChanges(first, dir, '2026-11-01')).toEqual([]);
      expect(readFileSync(path.join(dir, 'CHANGELOG.md'), 'utf8')).toContain('## 2026-11-01 (Cuadra-Version 2026-11-01)\n\n- The first snapshot: 1 tools.\n');
      const second = [...first, entry('parties.create', obj({ name: { type: 'string' } }, ['name']))];
      expect(recordSchemaChanges(second, dir, '2026-11-20')).toEqual([{ tool: 'parties.create', at: '', kind: 'added', breaking: false }]);
      const third = [entry('parties.create', obj({ name: { type: 'string' } }, ['name']))];
      expect(recordSchemaChanges(third, dir, '2026-11-27')).toHaveLength(1);
      const log = readFileSync(path.join(dir, 'CHANGELOG.md'), 'utf8');
      // Newest first, each section once, the header once.
      expect(log.match(/^## .*$/gm)).toEqual(['## 2026-11-27 (Cuadra-Version 2026-11-01)', '## 2026-11-20 (Cuadra-Version 2026-11-01)', '## 2026-11-01 (Cuadra-Version 2026-11-01)']);
      expect(log).toContain('- **breaking** `parties.list` removed');
      expect(log).toContain('- `parties.create` added');
      expect(log.match(/^# Tool schema changelog$/gm)).toHaveLength(1);
      // Nothing changed: nothing written.
      expect(recordSchemaChanges(third, dir, '2026-11-28')).toEqual([]);
      expect(readFileSync(path.join(dir, 'CHANGELOG.md'), 'utf8')).toBe(log);
      expect(JSON.parse(readFileSync(path.join(dir, 'snapshot.json'), 'utf8'))).toEqual(schemaSnapshot(third));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
