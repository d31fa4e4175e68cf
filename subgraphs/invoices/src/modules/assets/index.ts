import { defineModule } from '@cuadra/shared';
import { assetsMaintenance } from './maintenance.ts';
import { assetsSummary } from './metrics.ts';
import { assets } from './model.ts';
import { ASSET_SOURCES } from './ops.ts';
import { assetsSource } from './sources.ts';
import { capitalize } from './tools/capitalize.ts';
import { create } from './tools/create.ts';
import { depreciate } from './tools/depreciate.ts';
import { dispose } from './tools/dispose.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { recordUsage } from './tools/record_usage.ts';

/**
 * Fixed assets in two books (issue 38): NIIF para pymes §17, posted monthly to the journal, and the
 * fiscal book capped by Estatuto Tributario art. 137, kept beside it; their difference is the
 * deferred-tax basis. Sale and retirement with their gain or loss.
 */
export const assetsModule = defineModule({
  name: 'assets',
  tools: [create, capitalize, depreciate, recordUsage, dispose, get, list],
  models: [assets],
  listed: [{ model: assets }],
  reads: { sources: { assets: assetsSource }, metrics: { assets_summary: assetsSummary } },
  journalSources: Object.values(ASSET_SOURCES),
  maintenance: assetsMaintenance,
});
