import { randomBytes } from 'node:crypto';
import { connectDatabase } from '@cuadra/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from 'mongoose';
import { migrateRatesToPpm, migrateRunHolds } from '../src/lib/migrations.ts';

let db: Connection;
beforeAll(async () => {
  db = await connectDatabase(process.env.MONGO_URL!, `test_migrations_${randomBytes(4).toString('hex')}`);
});
afterAll(async () => {
  await db.dropDatabase().catch(() => undefined);
  await db.close();
});

describe('rates stored in basis points', () => {
  it('become parts per million once, in documents, schedules and items; other fields stay', async () => {
    await db.collection('invoices').insertOne({
      _id: 'inv_old', workspace: 'ws_1', lines: [{ description: 'x', tax_rate_bps: 1900, withholdings: [{ type: 'reteica', rate_bps: 96.6 }] }],
      withholding_rates: [{ type: 'retefuente', rate_bps: 400 }], withholdings: [{ type: 'retefuente', rate_bps: 400, base: 100, amount: 4 }],
    } as never);
    await db.collection('recurring_invoices').insertOne({ _id: 'rec_old', workspace: 'ws_1', lines: [{ tax_rate_bps: 500 }], withholdings: [] } as never);
    await db.collection('items').insertOne({ _id: 'itm_old', workspace: 'ws_1', name: 'Libro', tax_rate_bps: 0 } as never);
    expect(await migrateRatesToPpm(db)).toBe(3);
    expect(await db.collection('invoices').findOne({ _id: 'inv_old' } as never)).toMatchObject({
      lines: [{ description: 'x', tax_rate_ppm: 190000, withholdings: [{ type: 'reteica', rate_ppm: 9660 }] }],
      withholding_rates: [{ type: 'retefuente', rate_ppm: 40000 }], withholdings: [{ type: 'retefuente', rate_ppm: 40000, base: 100, amount: 4 }],
    });
    const invoice = await db.collection('invoices').findOne({ _id: 'inv_old' } as never);
    expect(JSON.stringify(invoice)).not.toContain('_bps');
    expect(await db.collection('recurring_invoices').findOne({ _id: 'rec_old' } as never)).toMatchObject({ lines: [{ tax_rate_ppm: 50000 }] });
    expect(await db.collection('items').findOne({ _id: 'itm_old' } as never)).toMatchObject({ name: 'Libro', tax_rate_ppm: 0 });
    // Done once: a later start reads the marker and changes nothing.
    expect(await migrateRatesToPpm(db)).toBe(0);
  });
});

describe('bills of payment runs approved before runs held them (issue 31)', () => {
  it('are held for their run once; a bill the run already paid, and runs not approved, are left alone', async () => {
    const line = (bill_id: string, n: number) => ({ bill_id, payment_id: `bpy_prun_old_${n}`, amount: 1000 });
    await db.collection('payment_runs').insertMany([
      { _id: 'prun_old', workspace: 'ws_1', status: 'exported', lines: [line('bil_a', 1), line('bil_b', 2)] },
      { _id: 'prun_draft', workspace: 'ws_1', status: 'draft', lines: [line('bil_c', 1)] },
    ] as never);
    await db.collection('bills').insertMany([
      { _id: 'bil_a', workspace: 'ws_1', rev: 3, settlements: [] },
      { _id: 'bil_b', workspace: 'ws_1', rev: 1, settlements: [{ ref: 'bpy_prun_old_2', amount: 1000 }] },
      { _id: 'bil_c', workspace: 'ws_1', rev: 1, settlements: [] },
    ] as never);
    expect(await migrateRunHolds(db)).toBe(1);
    expect(await db.collection('bills').findOne({ _id: 'bil_a' } as never)).toMatchObject({ rev: 4, run_hold: { run_id: 'prun_old', payment_id: 'bpy_prun_old_1', amount: 1000 } });
    expect((await db.collection('bills').findOne({ _id: 'bil_b' } as never))?.run_hold).toBeUndefined();
    expect((await db.collection('bills').findOne({ _id: 'bil_c' } as never))?.run_hold).toBeUndefined();
    expect(await migrateRunHolds(db)).toBe(0);
  });
});
