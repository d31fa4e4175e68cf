import { defineModule, type LaneReader } from '@cuadra/shared';
import { einvoicingLane } from '../einvoicing/agenda.ts';
import { taxLane } from './agenda.ts';
import { taxProfiles } from './model.ts';
import { configure } from './tools/configure.ts';

/**
 * The workspace's DIAN obligations: its tax profile and the agenda's `tax` lane — the national tax
 * calendar as data, together with e-invoicing's compliance warnings (certificate and numbering
 * resolutions lapsing, ranges running out), which are obligations towards DIAN too. One module
 * answers a lane, so the lane here merges both readers by date.
 */
export const taxModule = defineModule({
  name: 'tax',
  tools: [configure],
  models: [taxProfiles],
  reads: { agenda: { tax: mergeLanes(taxLane, einvoicingLane) } },
});

/** Several readers' entries of one lane, by date (a stable sort: each reader's own order kept within a day), within the window's limit. */
function mergeLanes(...readers: LaneReader[]): LaneReader {
  return async (w, ctx) => {
    const parts = await Promise.all(readers.map((read) => read(w, ctx)));
    return parts.flat().sort((a, b) => a.date.localeCompare(b.date)).slice(0, w.limit);
  };
}
