import { clampLimit, defineSource, pageNewestFirst, type SourceReader } from '@cuadra/shared';
import { MOVEMENT_TYPES, stockBalances, stockMovements, type BalanceDoc, type MovementDoc } from './model.ts';
import { movementView } from './place.ts';
import { fromMicro, share, QTY_SCALE } from './valuation.ts';

/** records.list `stock_levels`: one row per item and warehouse, from the running balances (no movement is read). Status `low` or `ok`. */
export const stockLevelsSource = defineSource<BalanceDoc>({
  model: stockBalances,
  statuses: ['ok', 'low'],
  search: (b, needle) => b.item_name.toLowerCase().includes(needle) || (b.item_sku ?? '').toLowerCase().includes(needle) || b.warehouse_code.toLowerCase().includes(needle),
  row: (b) => ({
    id: b._id.slice(b.workspace.length + 1), item_id: b.item_id, item: b.item_name, sku: b.item_sku, unit: b.unit, warehouse_id: b.warehouse_id, warehouse: b.warehouse_code,
    on_hand: fromMicro(b.qty), reserved: fromMicro(b.reserved), available: fromMicro(b.qty - b.reserved), reorder_point: fromMicro(b.reorder_point), status: b.status,
    value: b.value, unit_cost: b.qty > 0 ? share(b.value, QTY_SCALE, b.qty) : null, currency: b.currency, valuation_method: b.method,
  }),
});

/** records.list `stock_movements`: the stock ledger, newest first; `kind` is the movement type. */
export const stockMovementsSource = defineSource<MovementDoc>({
  model: stockMovements,
  kinds: Object.fromEntries(MOVEMENT_TYPES.map((t) => [t, { type: t }])),
  search: (m, needle) => m.item_id.toLowerCase().includes(needle) || m.warehouse_id.toLowerCase().includes(needle) || (m.reason ?? '').toLowerCase().includes(needle) || (m.source?.id ?? '').toLowerCase().includes(needle),
  row: movementView,
});

/**
 * The `inventory_journal` feed (service to service; ARCHITECTURE.md, "Inventory postings"): the
 * journal entries inventory's movements ask the finance journal to hold, newest first by the
 * movement's position — `{id, movement_id, kind, date, currency, memo, lines}` with `lines`
 * `{account, name, debit, credit}` balanced. An entry's lines never change once written (a
 * backdated movement's difference is a revaluation movement's own entry), so finance writes each
 * once by id.
 */
export const inventoryJournalSource: SourceReader = async (q, ctx) => {
  const page = await pageNewestFirst<MovementDoc>(stockMovements(ctx.db), { workspace: ctx.workspace, cursor: q.cursor, limit: clampLimit(q.limit) });
  const rows = page.rows.filter((m) => m.journal).map((m) => ({ id: m.journal!.id, movement_id: m._id, kind: m.type, date: m.journal!.date, currency: m.currency, memo: m.journal!.memo, lines: m.journal!.lines }));
  return { rows, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
};
