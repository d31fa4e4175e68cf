// parties.list {search} served by the trigram index kept at write time (issue 33): a search that
// matches one party of many finds it on its first page, whatever the workspace holds, with the same
// matches as the substring test (name, tax id number, e-mail; case-insensitive; anywhere in a word).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexSearchable } from '@cuadra/shared';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../../src/server.ts';
import { insertParty } from '../../src/modules/parties/tools/create.ts';
import { parties, partySearchTexts } from '../../src/modules/parties/model.ts';

let crm: TestSubgraph;
const owner = testPrincipal();
const elsewhere = testPrincipal();
// More parties than one page walks (16 buckets of 64 = 1,024 positions), the one sought among the oldest.
const N = 1_100;

beforeAll(async () => {
  crm = await startTestSubgraph(name, createServer);
  // Zurbarán first, alone: it holds the oldest position, so a search that walks positions newest first
  // (no index) stops with a cursor before reaching it, whatever the order the 8 writers below end in.
  await insertParty({ db: crm.db, workspace: owner.workspace, now: new Date() }, { name: 'Zurbarán Quintero Ltda', kind: 'vendor', email: 'pagos@zurbaran.co' });
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let i = next++; i < N; i = next++) {
      if (i === 5) continue; // Zurbarán's place in the count
      const ctx = { db: crm.db, workspace: owner.workspace, now: new Date() };
      await insertParty(ctx, { name: `Cliente ${i} SAS`, kind: 'customer', email: `c${i}@example.co` });
    }
  }));
  // Another workspace holds a party of the same name: never an answer here.
  await insertParty({ db: crm.db, workspace: elsewhere.workspace, now: new Date() }, { name: 'Zurbarán Quintero Ltda', kind: 'vendor' });
}, 60_000);
afterAll(async () => {
  await crm?.close();
});

const names = async (input: Record<string, unknown>) => {
  const r = await crm.call('parties.list', input, owner);
  expect(r.ok).toBe(true);
  return { names: r.output.rows.map((p: { name: string }) => p.name), next: r.output.next_cursor as string | undefined };
};

describe('parties.list search by index', () => {
  it('finds the one party that matches on the first page, with no cursor left, in this workspace only', async () => {
    // A walk of positions stops after 1,024 of them with an empty page and a cursor; the index reads the match.
    expect(await names({ search: 'zurbarán quintero' })).toEqual({ names: ['Zurbarán Quintero Ltda'], next: undefined });
    // Inside a word, another case, the e-mail: the same substring test as before.
    expect((await names({ search: 'URBARÁN' })).names).toEqual(['Zurbarán Quintero Ltda']);
    expect((await names({ search: 'pagos@zur' })).names).toEqual(['Zurbarán Quintero Ltda']);
    expect((await names({ search: 'urbaran q' })).names).toEqual([]); // no accent folding, as the substring test: the name has "urbarán q"
  });

  it('pages a search that matches many, newest first, to the same rows a walk gives', async () => {
    // "cliente 1" matches Cliente 1, 10–19, 100–199 and 1000–1099: 211 parties (created by 8 writers at once, so compared as sets).
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await names({ search: 'cliente 1', limit: 50, ...(cursor ? { cursor } : {}) });
      seen.push(...page.names);
      cursor = page.next;
      pages++;
    } while (cursor && pages < 10);
    const expected = [1, ...Array.from({ length: 10 }, (_, i) => 10 + i), ...Array.from({ length: 100 }, (_, i) => 100 + i), ...Array.from({ length: 100 }, (_, i) => 1000 + i)].map((i) => `Cliente ${i} SAS`);
    expect(seen.sort()).toEqual(expected.sort());
    // 211 rows: four full pages of 50 and one of 11, the last without a cursor.
    expect(pages).toBe(5);
    // Two characters have no trigram: the page walks positions as before (bounded, with a cursor).
    expect((await names({ search: 'zu' })).next).toBeDefined();
  });

  it('follows a rename, and indexes at start a workspace written before the index was kept', async () => {
    const found = await crm.call('parties.list', { search: 'zurbarán' }, owner);
    const id = found.output.rows[0].id;
    expect((await crm.call('parties.update', { id, name: 'Ybarra Ocampo Ltda' }, owner)).ok).toBe(true);
    expect((await names({ search: 'zurbarán' })).names).toEqual([]);
    expect((await names({ search: 'ybarra oca' })).names).toEqual(['Ybarra Ocampo Ltda']);
    // The e-mail did not change: still found by it.
    expect((await names({ search: 'pagos@zur' })).names).toEqual(['Ybarra Ocampo Ltda']);
    // A workspace whose parties have no trigrams (written before they were kept): searches walk, correct but bounded…
    await crm.db.collection('search_grams').deleteMany({ _id: { $regex: `^parties\\|${owner.workspace}\\|` } } as never);
    await crm.db.collection('search_grams_marks').deleteOne({ _id: `parties|${owner.workspace}` } as never);
    expect(await names({ search: 'ybarra oca' })).toMatchObject({ names: [], next: expect.any(String) });
    // …until the start-up pass indexes it (and skips what is indexed already).
    expect(await indexSearchable(parties(crm.db), { searchable: partySearchTexts })).toBe(1);
    expect(await names({ search: 'ybarra oca' })).toEqual({ names: ['Ybarra Ocampo Ltda'], next: undefined });
    expect(await indexSearchable(parties(crm.db), { searchable: partySearchTexts })).toBe(0);
  });
});
