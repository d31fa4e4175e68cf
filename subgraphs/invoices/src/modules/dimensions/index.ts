import { wakingPayrollPull } from '../../accounting/payroll_pull.ts';
import { defineModule } from '@cuadra/shared';
import { tagDimensions, tags } from './model.ts';
import { profitability } from './profitability.ts';
import { tagDimensionsSource, tagsSource } from './sources.ts';
import { archive } from './tools/archive.ts';
import { archiveTag } from './tools/archive_tag.ts';
import { create } from './tools/create.ts';
import { createTag } from './tools/create_tag.ts';
import { list } from './tools/list.ts';
import { listTags } from './tools/list_tags.ts';

/**
 * Analytic dimensions and their tags (cost_center by default) that journal, invoice and bill
 * lines carry, and the `profitability` metric read per tag from the ledger rollups.
 */
export const dimensionsModule = defineModule({
  name: 'dimensions',
  tools: [create, list, archive, createTag, listTags, archiveTag],
  models: [tagDimensions, tags],
  reads: {
    sources: { tags: tagsSource, tag_dimensions: tagDimensionsSource },
    metrics: { profitability: wakingPayrollPull(profitability) },
  },
});
