import type { Connection } from 'mongoose';

type Rates = { tax_rate_bps?: number; tax_rate_ppm?: number; rate_bps?: number; rate_ppm?: number; withholdings?: Rates[] };

/** A stored line or rate with basis points turned into parts per million (× 100), other fields kept. */
function toPpm<T extends Rates>(value: T): T {
  const { tax_rate_bps, rate_bps, ...rest } = value;
  const out: Rates = { ...rest };
  if (tax_rate_bps !== undefined) out.tax_rate_ppm = Math.round(tax_rate_bps * 100);
  if (rate_bps !== undefined) out.rate_ppm = Math.round(rate_bps * 100);
  if (Array.isArray(value.withholdings)) out.withholdings = value.withholdings.map(toPpm);
  return out as T;
}

/**
 * Rates were basis points until CONTRACT §9 made them parts per million. Data written before
 * (kept under `.data/` between runs) is converted once at start-up; the query only matches
 * documents still holding a `*_bps` rate, so later starts read nothing.
 */
export async function migrateRatesToPpm(db: Connection): Promise<number> {
  // Done once per database: later starts read the marker instead of scanning four collections.
  const migrations = db.collection<{ _id: string; at: Date }>('migrations');
  if (await migrations.findOne({ _id: 'rates-ppm' })) return 0;
  let changed = 0;
  const collections: [string, string[]][] = [
    ['invoices', ['lines', 'withholding_rates', 'withholdings']],
    ['sales_documents', ['lines', 'withholding_rates', 'withholdings']],
    ['recurring_invoices', ['lines', 'withholdings']],
  ];
  for (const [name, arrays] of collections) {
    const coll = db.collection(name);
    const stale = { $or: arrays.flatMap((a) => [{ [`${a}.tax_rate_bps`]: { $exists: true } }, { [`${a}.rate_bps`]: { $exists: true } }]) };
    for await (const doc of coll.find(stale)) {
      const set: Record<string, unknown> = {};
      for (const a of arrays) if (Array.isArray(doc[a])) set[a] = (doc[a] as Rates[]).map(toPpm);
      await coll.updateOne({ _id: doc._id }, { $set: set });
      changed++;
    }
  }
  const itemsColl = db.collection('items');
  for await (const doc of itemsColl.find({ tax_rate_bps: { $exists: true } })) {
    await itemsColl.updateOne({ _id: doc._id }, { $set: { tax_rate_ppm: Math.round((doc.tax_rate_bps as number) * 100) }, $unset: { tax_rate_bps: '' } });
    changed++;
  }
  await migrations.updateOne({ _id: 'rates-ppm' }, { $set: { at: new Date() } }, { upsert: true });
  return changed;
}

/**
 * Bills of payment runs approved before runs held their bills (issue 31) get the hold their run
 * would give them now, so their bank file stays the only way they are paid. Done once per
 * database; reads only the runs still approved, exported or confirming. A bill the run's payment
 * already settled, or already held, is left alone.
 */
export async function migrateRunHolds(db: Connection, now = new Date()): Promise<number> {
  const migrations = db.collection<{ _id: string; at: Date }>('migrations');
  if (await migrations.findOne({ _id: 'run-holds' })) return 0;
  let held = 0;
  const runs = db.collection<{ _id: string; workspace: string; lines: { bill_id: string; payment_id: string; amount: number }[] }>('payment_runs');
  for await (const run of runs.find({ status: { $in: ['approved', 'exported', 'confirming'] } })) {
    for (const l of run.lines) {
      const r = await db.collection<{ _id: string }>('bills').updateOne(
        { _id: l.bill_id, workspace: run.workspace, run_hold: null, 'settlements.ref': { $ne: l.payment_id } },
        { $set: { run_hold: { run_id: run._id, payment_id: l.payment_id, amount: l.amount, at: now } }, $inc: { rev: 1 } },
      );
      held += r.modifiedCount;
    }
  }
  await migrations.updateOne({ _id: 'run-holds' }, { $set: { at: now } }, { upsert: true });
  return held;
}
