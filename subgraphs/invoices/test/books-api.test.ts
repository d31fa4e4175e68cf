import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineModule, fromModules } from '@cuadra/shared';
import { testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { startInvoices } from './setup.ts';
import { declareJournalSources, journalEntries, postEntry, reverseEntry, type JournalLine } from '../src/books/index.ts';

// The books' API as a module added later uses it (a stock-movement feed): it declares its kind and
// posts, edits nothing in src/books/.
let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

const KIND = 'stock_movement';
/** Goods received: Dr 143505 inventory 250,000; Cr 220505 suppliers 250,000. */
const RECEIPT: JournalLine[] = [
  { account: '143505', name: 'Mercancías no fabricadas por la empresa', debit: 250_000, credit: 0, party_id: null },
  { account: '220505', name: 'Proveedores nacionales', debit: 0, credit: 250_000, party_id: 'pty_1' },
];

function books() {
  return { db: sg.db, workspace: testPrincipal().workspace, now: new Date() };
}

describe('books API', () => {
  it('refuses a posting whose source kind no module declared, writing nothing; posts it once declared', async () => {
    const ctx = books();
    const kind = `undeclared_${Date.now()}`;
    await expect(postEntry(ctx, { kind, id: 'mov_1' }, RECEIPT, { id: 'je_mov_1', date: '2026-10-05', currency: 'COP', memo: 'Entrada' })).rejects.toThrow(/declared by no module/);
    expect(await journalEntries(sg.db).countDocuments({ workspace: ctx.workspace })).toBe(0);
    declareJournalSources([kind]);
    await postEntry(ctx, { kind, id: 'mov_1' }, RECEIPT, { id: 'je_mov_1', date: '2026-10-05', currency: 'COP', memo: 'Entrada' });
    expect(await journalEntries(sg.db).countDocuments({ workspace: ctx.workspace })).toBe(1);
  });

  it('refuses an unbalanced entry, writing nothing', async () => {
    const ctx = books();
    declareJournalSources([KIND]);
    const lines = [RECEIPT[0], { ...RECEIPT[1], credit: 249_999 }];
    await expect(postEntry(ctx, { kind: KIND, id: 'mov_2' }, lines, { id: 'je_mov_2', date: '2026-10-05', currency: 'COP', memo: 'x' })).rejects.toThrow(/does not balance/);
    expect(await journalEntries(sg.db).countDocuments({ workspace: ctx.workspace })).toBe(0);
  });

  it('reverses an entry from its posted lines, debit and credit swapped, once; the original untouched', async () => {
    const ctx = books();
    declareJournalSources([KIND]);
    await postEntry(ctx, { kind: KIND, id: 'mov_3' }, RECEIPT, { id: 'je_mov_3', date: '2026-10-05', currency: 'COP', memo: 'Entrada de mercancía' });
    const id = await reverseEntry(ctx, 'je_mov_3', '2026-10-20');
    expect(id).toBe('je_mov_3_rev');
    // Again (a retry): the same id, nothing more written.
    expect(await reverseEntry(ctx, 'je_mov_3', '2026-10-20')).toBe(id);
    const all = await journalEntries(sg.db).find({ workspace: ctx.workspace }).sort({ _id: 1 }).lean();
    expect(all.map((e) => e._id)).toEqual(['je_mov_3', 'je_mov_3_rev']);
    const [original, reversal] = all;
    expect(original.lines).toEqual(RECEIPT);
    expect(reversal).toMatchObject({ date: '2026-10-20', currency: 'COP', memo: 'Reversión: Entrada de mercancía', source: { kind: 'reversal', id: 'je_mov_3' } });
    // Dr 220505 250,000 (the supplier no longer owed); Cr 143505 250,000 (the goods out again).
    expect(reversal.lines).toEqual([
      { account: '143505', name: 'Mercancías no fabricadas por la empresa', debit: 0, credit: 250_000, party_id: null },
      { account: '220505', name: 'Proveedores nacionales', debit: 250_000, credit: 0, party_id: 'pty_1' },
    ]);
  });

  it('keeps a reversal out of a closed month and refuses one of an entry never posted, writing nothing', async () => {
    const owner = testPrincipal();
    const ctx = { db: sg.db, workspace: owner.workspace, now: new Date() };
    declareJournalSources([KIND]);
    await postEntry(ctx, { kind: KIND, id: 'mov_4' }, RECEIPT, { id: 'je_mov_4', date: '2026-09-05', currency: 'COP', memo: 'Entrada' });
    const closed = await sg.call('periods.close', { month: '2026-09' }, owner);
    expect(closed).toMatchObject({ ok: true });
    await expect(reverseEntry(ctx, 'je_mov_4', '2026-09-30')).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('2026-09 is closed') });
    await expect(reverseEntry(ctx, 'je_nothing', '2026-10-01')).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('not posted') });
    expect(await journalEntries(sg.db).countDocuments({ workspace: ctx.workspace })).toBe(1);
    // Dated in an open month, it posts.
    await reverseEntry(ctx, 'je_mov_4', '2026-10-01');
    expect(await journalEntries(sg.db).countDocuments({ workspace: ctx.workspace })).toBe(2);
  });

  it('refuses at start-up a journal source kind two modules declare', () => {
    const a = defineModule({ name: 'stock', tools: [], journalSources: ['stock_movement'] });
    const b = defineModule({ name: 'assets', tools: [], journalSources: ['depreciation', 'stock_movement'] });
    expect(() => fromModules('invoices', [a, b])).toThrow(/stock_movement.*declared by two modules \(stock and assets\)/);
    expect(fromModules('invoices', [a, defineModule({ name: 'assets', tools: [], journalSources: ['depreciation'] })]).journalSources).toEqual(['stock_movement', 'depreciation']);
  });
});
