import { defineListTool, searchTerm } from '@cuadra/shared';
import { ASSET_CLASS_KEYS } from '../classes.ts';
import { ASSET_STATUSES, ASSET_VIEW_SCHEMA, assetMatches, assets, assetView, type AssetDoc } from '../model.ts';

/** Lists fixed assets, newest first. */
export const list = defineListTool({
  name: 'assets.list',
  description: 'List fixed assets, newest first; filter by status, class or a case-insensitive search over the name.',
  model: assets,
  view: (a: AssetDoc) => assetView(a),
  viewSchema: ASSET_VIEW_SCHEMA,
  filters: { status: { enum: ASSET_STATUSES }, class: { enum: ASSET_CLASS_KEYS }, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: (input) => {
    const text = searchTerm(input.search);
    return input.status || input.class || text
      ? (a: AssetDoc) => (!input.status || a.status === input.status) && (!input.class || a.class === input.class) && (!text || assetMatches(a, text))
      : undefined;
  },
});
