import { defineSource } from '@cuadra/shared';
import { ASSET_CLASSES } from './classes.ts';
import { ASSET_STATUSES, assetMatches, assets, carryingAmounts, type AssetDoc } from './model.ts';

/** records.list `assets`: status recording, active, disposing, sold or retired; kind = the class; both books' figures per row. */
export const assetsSource = defineSource<AssetDoc>({
  model: assets,
  search: assetMatches,
  statuses: ASSET_STATUSES,
  kinds: Object.fromEntries(Object.keys(ASSET_CLASSES).map((k) => [k, (a: AssetDoc) => a.class === k])),
  row: (a) => ({
    id: a._id, name: a.name, class: a.class, status: a.status, currency: a.currency, acquisition_date: a.acquisition_date, cost: a.cost,
    niif_accumulated: a.niif_accumulated, fiscal_accumulated: a.fiscal_accumulated, ...carryingAmounts(a), next_month: a.next_month,
  }),
});
