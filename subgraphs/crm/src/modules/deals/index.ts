import { defineModule, derivedMaintenance } from '@cuadra/shared';
import { readBoard } from './board.ts';
import { deals } from './model.ts';
import { crmPipelineMetric } from './metrics.ts';
import { dealsSource } from './sources.ts';
import { create } from './tools/create.ts';
import { createFromLead } from './tools/create_from_lead.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { lose } from './tools/lose.ts';
import { move } from './tools/move.ts';
import { reopen } from './tools/reopen.ts';
import { update } from './tools/update.ts';
import { win } from './tools/win.ts';

/** Deals moving through pipelines: the cards of the board, their history, the pipeline metric. */
export const dealsModule = defineModule({
  name: 'deals',
  // Columns and counters a dead move left half-applied are finished by the sweep, never by a read.
  maintenance: derivedMaintenance([deals]),
  tools: [create, createFromLead, update, get, list, move, win, lose, reopen],
  models: [deals],
  listed: [{ model: deals }],
  reads: { sources: { crm_deals: dealsSource }, metrics: { crm_pipeline: crmPipelineMetric }, boards: { pipeline: readBoard } },
  readGuards: { 'Query.dealForQuote': 'deals', 'Query.leadParties': 'deals' },
});
