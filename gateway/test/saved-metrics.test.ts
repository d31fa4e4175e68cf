import { randomBytes } from 'node:crypto';
import { connectDatabase } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SAVED_METRICS, resolveSaved, SavedMetricStore } from '../src/canvas/saved.ts';

let db: Connection;
let store: SavedMetricStore;
beforeAll(async () => {
  db = await connectDatabase(process.env.MONGO_URL!, `test_saved_metrics_${randomBytes(4).toString('hex')}`);
  store = new SavedMetricStore(db);
  await store.init();
});
afterAll(async () => {
  await db.dropDatabase().catch(() => undefined);
  await db.close();
});

describe('saved metrics: the store and how saved:<key> resolves', () => {
  it('saves, replaces, lists in key order by cursor, deletes; sealed per workspace; bounded', async () => {
    const now = new Date('2026-11-23T12:00:00Z');
    expect((await store.save('ws_a', 'ventas', { metric: 'revenue', interval: 'week' }, now)).created).toBe(true);
    const again = await store.save('ws_a', 'ventas', { metric: 'revenue', interval: 'month' }, now);
    expect(again).toMatchObject({ created: false, doc: { version: 2, query: { metric: 'revenue', interval: 'month' } } });
    await store.save('ws_a', 'cartera', { metric: 'ar_outstanding' }, now);
    await expect(store.save('ws_a', 'otro', { metric: 'saved:ventas' }, now)).rejects.toMatchObject({ code: 'invalid_input', field: '/query/metric' });
    const first = await store.list('ws_a', { limit: 1 });
    expect(first.rows.map((r) => r.metric)).toEqual(['saved:cartera']);
    expect(first.total).toBe(2);
    expect((await store.list('ws_a', { limit: 1, cursor: first.next_cursor })).rows.map((r) => r.key)).toEqual(['ventas']);
    expect(await store.get('ws_b', 'ventas')).toBeNull();
    expect((await store.list('ws_b', { limit: 10 })).rows).toEqual([]);
    expect(await store.remove('ws_b', 'ventas')).toBe(false);
    expect(await store.remove('ws_a', 'cartera')).toBe(true);
    expect(await store.get('ws_a', 'cartera')).toBeNull();
    // At most MAX_SAVED_METRICS per workspace; replacing an existing key is still allowed at the bound.
    await db.collection('saved_metrics').insertMany(Array.from({ length: MAX_SAVED_METRICS - 1 }, (_, i) => ({ _id: `ws_a|k${i}`, workspace: 'ws_a', key: `k${i}`, query: { metric: 'revenue' }, version: 1, created_at: now, updated_at: now })) as never);
    await expect(store.save('ws_a', 'one-more', { metric: 'revenue' }, now)).rejects.toMatchObject({ code: 'conflict' });
    expect((await store.save('ws_a', 'ventas', { metric: 'revenue', days: 30 }, now)).doc.version).toBe(3);
  });

  it('lays the caller\'s fields over the saved query; a caller\'s window replaces the saved window', () => {
    const saved = { metric: 'profitability', from: '2026-01-01', to: '2026-06-30', limit: 10, dimension_key: 'proyecto' } as const;
    expect(resolveSaved(saved, { metric: 'saved:x' })).toEqual(saved);
    expect(resolveSaved(saved, { metric: 'saved:x', limit: 3 })).toEqual({ ...saved, limit: 3 });
    expect(resolveSaved(saved, { metric: 'saved:x', days: 30 })).toEqual({ metric: 'profitability', days: 30, limit: 10, dimension_key: 'proyecto' });
    expect(resolveSaved({ metric: 'revenue', days: 90, interval: 'week' }, { metric: 'saved:x', from: '2026-10-01', to: '2026-10-31' }))
      .toEqual({ metric: 'revenue', interval: 'week', from: '2026-10-01', to: '2026-10-31' });
  });
});
