import { defineGetTool } from '@cuadra/shared';
import { ASSET_VIEW_SCHEMA, assets, assetView, type AssetDoc } from '../model.ts';

/** Reads one fixed asset with both books. */
export const get = defineGetTool<AssetDoc>({
  name: 'assets.get',
  description: 'Get one fixed asset by id: cost, terms, both books (NIIF and fiscal) month by month, carrying amounts, the deferred-tax basis (their difference) and its disposal.',
  model: assets, view: assetView, key: 'asset', what: 'fixed asset', viewSchema: ASSET_VIEW_SCHEMA,
});
