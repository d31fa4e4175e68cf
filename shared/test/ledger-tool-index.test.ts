// `ledger.list {tool}` reads what it returns (issue 33): the positions of each tool's entries are
// kept in chunks by the pass that counts the activity days, so a rare tool's page looks up its own
// entries (plus the few appended since the last counted block), not every entry of the chain.
// Answers are checked against this test's own query of the stored entries.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from 'mongoose';
import { connectDatabase } from '../src/db.ts';
import { Governance } from '../src/governance/index.ts';
import { ACTIVITY_BLOCK, Ledger } from '../src/governance/ledger.ts';
import type { Principal } from '../src/principal.ts';
import { positionsAsked } from './ledger-positions-asked.ts';

let db: Connection;
beforeAll(async () => {
  db = await connectDatabase(process.env.MONGO_URL!, `test_toolidx_${randomBytes(4).toString('hex')}`, { monitorCommands: true });
  await new Governance(db).init();
});
afterAll(async () => {
  await db.dropDatabase().catch(() => undefined);
  await db.close();
});

const principal = (ws: string, actor = 'k'): Principal => ({ workspace: ws, role: 'owner', actor: { type: 'api_key', id: actor }, credential_id: actor, scopes: null, patterns: null });
/** Appends `n` entries one batch after another (so seq follows i): `rare` where `isRare(i)`, `projects.list` elsewhere. */
async function append(ledger: Ledger, ws: string, n: number, isRare: (i: number) => boolean, actor?: (i: number) => string): Promise<void> {
  for (let i = 0; i < n; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, n - i) }, (_, j) => ledger.append({ principal: principal(ws, actor?.(i + j)), tool: isRare(i + j) ? 'payroll.run' : 'projects.list', risk: 'read', input_digest: null, outcome: 'ok', duration_ms: 1 })));
  }
}
/** The truth, from the collection itself: the seqs of the workspace's `payroll.run` entries, newest first. */
async function storedSeqs(ws: string, actor?: string): Promise<number[]> {
  const rows = await db.collection('ledger').find({ workspace: ws, tool: 'payroll.run', ...(actor ? { 'actor.id': actor } : {}) }).toArray();
  return rows.map((r) => r.seq as number).sort((a, b) => b - a);
}
/** Every page of `ledger.list {tool: payroll.run}` by cursor, and how many entry positions the pages asked the store for. */
async function pages(ledger: Ledger, ws: string, limit: number, actor?: string): Promise<{ seqs: number[]; asked: number; pages: number }> {
  const seqs: number[] = [];
  let before: number | undefined;
  let n = 0;
  const { asked } = await positionsAsked(db, async () => {
    do {
      const page = await ledger.list(ws, { tool: 'payroll.run', limit, ...(actor ? { actor } : {}), ...(before ? { before } : {}) });
      for (const r of page.rows) expect(r.tool).toBe('payroll.run');
      seqs.push(...page.rows.map((r) => r.seq));
      before = page.next_before;
      n++;
    } while (before);
  });
  return { seqs, asked, pages: n };
}

describe('ledger.list filtered by a tool', () => {
  it('looks up a rare tool\'s entries, not the chain: the same positions asked at 300 and 3,000 entries, same answers as the stored entries, pages across the indexed tail', async () => {
    const ledger = new Ledger(db);
    const asked: number[] = [];
    for (const size of [300, 3_000]) {
      const ws = `ws_${randomBytes(4).toString('hex')}`;
      // One rare entry in each of the first two blocks and one in the last, however large the chain.
      await append(ledger, ws, size, (i) => i === 7 || i === 150 || i === size - 40);
      await ledger.countActivity(ws);
      // 30 more, not yet a whole block: read by position above the counted mark (the list is never stale).
      await append(ledger, ws, 30, (i) => i === 3 || i === 20);
      const truth = await storedSeqs(ws);
      // 3 + 2 = 5 payroll runs; the largest two are in the uncounted tail (positions size+4 and size+21).
      expect(truth).toHaveLength(5);
      expect(truth.slice(0, 2)).toEqual([size + 21, size + 4]);
      const one = await pages(ledger, ws, 2);
      expect(one.seqs).toEqual(truth);
      asked.push(one.asked);
    }
    // Per chain: the tail (at most one block) plus the rare entries — not 300 or 3,000 positions.
    for (const a of asked) expect(a).toBeLessThanOrEqual(ACTIVITY_BLOCK + 10);
    expect(asked[1]).toBe(asked[0]);
  });

  it('indexes an existing chain by its own resumable catch-up, and answers the same before, during and after', async () => {
    const ledger = new Ledger(db);
    const ws = `ws_${randomBytes(4).toString('hex')}`;
    await append(ledger, ws, 650, (i) => i % 97 === 5, (i) => (i % 2 ? 'a' : 'b'));
    await ledger.countActivity(ws);
    const truth = await storedSeqs(ws);
    const byA = await storedSeqs(ws, 'a');
    // i ≡ 5 (mod 97) for i < 650: 5, 102, 199, 296, 393, 490, 587 → 7 entries at seq i + 1; odd i (actor a): 5, 199, 393, 587.
    expect(truth).toEqual([588, 491, 394, 297, 200, 103, 6]);
    expect(byA).toEqual([588, 394, 200, 6]);
    // A chain written before the index: its positions and mark gone (the day counters stay counted).
    await db.collection('ledger_tool_positions').deleteMany({ workspace: ws });
    await db.collection('ledger_tool_marks').deleteOne({ _id: ws as never });
    expect((await pages(ledger, ws, 3)).seqs).toEqual(truth);
    // A process died mid-catch-up: blocks 1–4 indexed, block 5 written into the positions, the mark left at 4.
    await ledger.countActivity(ws, 5);
    await db.collection('ledger_tool_marks').updateOne({ _id: ws as never }, { $set: { block: 4 } });
    expect((await pages(ledger, ws, 3)).seqs).toEqual(truth);
    await ledger.countActivity(ws);
    expect((await db.collection('ledger_tool_marks').findOne({ _id: ws as never }))?.block).toBe(6);
    const after = await pages(ledger, ws, 3);
    expect(after.seqs).toEqual(truth);
    // Positions 601–650 (not a whole block) read once by position; then each indexed entry looked up once —
    // a page of 3 asks for 3 positions, not a window: 50 + 3 + 3 + 1 = 57.
    expect(after.asked).toBe(50 + truth.length);
    // Another filter on top of the tool reads the tool's entries only and keeps the stored order.
    const a = await pages(ledger, ws, 1, 'a');
    expect(a.seqs).toEqual(byA);
    expect(a.asked).toBeLessThanOrEqual(3 * (ACTIVITY_BLOCK + truth.length));
  });
});
