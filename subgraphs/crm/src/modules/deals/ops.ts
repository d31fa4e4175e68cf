import {
  applyIntent, CuadraError, derivedIntent, dropMarker, lineAmounts, markIntent, newId, settleInFlight, sumAmounts, createPositioned, type DerivedChange, type ToolContext,
} from '@cuadra/shared';
import { parties } from '../parties/model.ts';
import { findPipeline, findStage, keyBetween, readPipelines, stagesInOrder, type Pipeline, type PipelineSetDoc, type Stage } from '../pipelines/model.ts';
import { checkCustom, mergeCustom, readFields, searchableCustom, type FieldSetDoc } from '../crm_fields/model.ts';
import { closeChanges, columnCards, columnChanges, stageExitChanges, type Placement } from './columns.ts';
import { deals, HISTORY_KEPT, type DealDoc, type DealLine, type StageChange } from './model.ts';
import { addToIndex, partyKey, removeFromIndex, searchKeys } from './search.ts';

/** Where to put a card in its column: before or after another deal of it (neither: on top). */
export interface Place { before?: string; after?: string }

/** The order key for a card placed in a stage's column (`field`: where a bad neighbour is refused). */
export async function keyInColumn(ctx: Pick<ToolContext, 'db' | 'workspace'>, stageId: string, dealId: string | null, place: Place | undefined, field: string): Promise<string> {
  if (!place?.before && !place?.after) {
    const [first] = (await columnCards(ctx.db, ctx.workspace, stageId, 2)).filter((c) => c.i !== dealId);
    return keyBetween(null, first?.k);
  }
  const cards = (await columnCards(ctx.db, ctx.workspace, stageId)).filter((c) => c.i !== dealId);
  const neighbour = place.before ?? place.after!;
  const i = cards.findIndex((c) => c.i === neighbour);
  if (i < 0) throw new CuadraError('invalid_input', `Deal ${neighbour} is not in that column.`, { field: `${field}/${place.before ? 'before' : 'after'}` });
  const [lo, hi] = place.before ? [cards[i - 1], cards[i]] : [cards[i], cards[i + 1]];
  // Two cards given one key by concurrent moves sort by id; a key strictly between distinct neighbours always exists.
  const low = lo && hi && lo.k === hi.k ? cards.slice(0, cards.indexOf(lo)).reverse().find((c) => c.k < hi.k) : lo;
  return keyBetween(low?.k, hi?.k === low?.k ? undefined : hi?.k);
}

/** Lines as stored, with each subtotal computed exactly (shared lineAmounts). */
export function dealLines(input: readonly { description: string; quantity: number; unit_price: number; discount_bps?: number; tax_rate_ppm?: number; item_id?: string }[]): DealLine[] {
  return input.map((l, i) => ({
    description: l.description.trim(), quantity: l.quantity, unit_price: l.unit_price, discount_bps: l.discount_bps ?? 0, tax_rate_ppm: l.tax_rate_ppm ?? 0, item_id: l.item_id ?? null,
    subtotal: lineAmounts(l.quantity, l.unit_price, l.discount_bps ?? 0, l.tax_rate_ppm ?? 0, `/lines/${i}`).subtotal,
  }));
}

/** A deal's amount: the lines' subtotals when it has lines, else the amount given. */
export function amountOf(lines: readonly DealLine[], given: number | undefined): number {
  return lines.length ? sumAmounts(lines.map((l) => l.subtotal), (i) => `/lines/${i}`, 'The deal amount') : (given ?? 0);
}

/** The party a deal names, or `invalid_input` at `field`; its name goes on the card. */
export async function partyName(ctx: Pick<ToolContext, 'db' | 'workspace'>, partyId: string, field: string): Promise<string> {
  const p = await parties(ctx.db).findOne({ _id: partyId, workspace: ctx.workspace }).lean();
  if (!p) throw new CuadraError('invalid_input', `No party ${partyId} exists in this workspace.`, { field });
  if (p.status === 'archived') throw new CuadraError('invalid_input', `${p.name} is archived; restore it to open deals with it.`, { field });
  return p.name;
}

/** The texts a deal is found by. */
export function dealSearchKeys(d: Pick<DealDoc, 'title' | 'party_name' | 'party_id' | 'tags' | 'custom'>, fields: Pick<FieldSetDoc, 'fields'>): string[] {
  return [...searchKeys([d.title, d.party_name, ...d.tags, ...searchableCustom(fields, 'deal', d.custom)]), ...(d.party_id ? [partyKey(d.party_id)] : [])];
}

/** The deal's whole searchable text, normalised once per check. */
export function dealText(d: Pick<DealDoc, 'title' | 'party_name' | 'tags' | 'custom'>, fields: Pick<FieldSetDoc, 'fields'>): string {
  return [d.title, d.party_name ?? '', ...d.tags, ...searchableCustom(fields, 'deal', d.custom)].join(' ');
}

function placement(d: Pick<DealDoc, 'pipeline_id' | 'stage_id' | 'order_key' | 'amount'>): Placement {
  return { pipeline_id: d.pipeline_id, stage_id: d.stage_id, order_key: d.order_key, amount: d.amount };
}

/** A deal's move into a stage: its new fields, its history entry and the counters it changes. */
export interface Transition {
  set: Partial<DealDoc>;
  history?: StageChange;
  changes: DerivedChange[];
}

/**
 * What moving a deal into `stage` at `orderKey` changes: its status follows the stage's kind; a
 * stage change is kept in the history (from, to, when, who) and counted as an exit of the old
 * stage; closing counts a win or loss on the day, reopening takes that back on the day it closed.
 */
export function transition(d: DealDoc, pipeline: Pipeline, stage: Stage, orderKey: string, by: string, now: Date, lost?: { reason: string; note: string | null; field: string }): Transition {
  const status: DealDoc['status'] = stage.kind === 'open' ? 'open' : stage.kind;
  const set: Partial<DealDoc> = { pipeline_id: pipeline.id, stage_id: stage.id, order_key: orderKey, status };
  const changes: DerivedChange[] = [];
  let history: StageChange | undefined;
  if (stage.id !== d.stage_id) {
    history = { from: d.stage_id, to: stage.id, at: now, by };
    changes.push(...stageExitChanges(d.workspace, d.currency, d.stage_id, now.getTime() - new Date(d.stage_entered_at).getTime(), now));
    set.stage_entered_at = now;
  }
  if (d.status !== status) {
    if (d.status !== 'open' && d.closed_at) changes.push(...closeChanges(d.workspace, d.currency, d.status, d.amount, d.created_at, new Date(d.closed_at), -1));
    if (status !== 'open') {
      changes.push(...closeChanges(d.workspace, d.currency, status, d.amount, d.created_at, now, 1));
      set.closed_at = now;
    } else set.closed_at = null;
  }
  if (status === 'lost') {
    if (!lost) throw new CuadraError('invalid_input', `Moving a deal into the lost stage ${stage.name} needs the reason it was lost.`, { field: '/lost_reason' });
    if (!pipeline.lost_reasons.includes(lost.reason)) throw new CuadraError('invalid_input', `"${lost.reason}" is not one of this pipeline's lost reasons (${pipeline.lost_reasons.join(', ')}).`, { field: lost.field });
    set.lost_reason = lost.reason;
    set.lost_note = lost.note;
  } else if (status !== d.status) {
    set.lost_reason = null;
    set.lost_note = null;
  }
  return { set, history, changes };
}

/** The stage a move names, in the deal's workspace; `invalid_input` at `field` for an unknown or archived one. */
export function stageNamed(set: PipelineSetDoc, stageId: string, field: string): { pipeline: Pipeline; stage: Stage } {
  const found = findStage(set, stageId);
  if (!found || found.stage.status !== 'active' || found.pipeline.status !== 'active') throw new CuadraError('invalid_input', `No active stage ${stageId} exists in this workspace.`, { field });
  return found;
}

/** The first stage of a kind in a pipeline (win → its first won stage…); `conflict` when it has none. */
export function firstStageOf(p: Pipeline, kind: Stage['kind']): Stage {
  const s = stagesInOrder(p).find((x) => x.kind === kind);
  if (!s) throw new CuadraError('conflict', `The pipeline ${p.name} has no ${kind} stage; add one with pipelines.add_stage.`);
  return s;
}

/** What one change of a deal writes, computed from the deal as read (null: nothing to change). */
export type DealChange = (d: DealDoc, context: { pipelines: PipelineSetDoc; fields: FieldSetDoc }) => Promise<{ set: Partial<DealDoc>; history?: StageChange; changes?: DerivedChange[] } | null>;

/** How long a change of a deal waits for the changes ahead of it before answering `conflict`. */
const CHANGE_WAIT_MS = 5_000;

/** A short random pause before reading the deal again; `conflict` once the change has waited {@link CHANGE_WAIT_MS}. */
async function waitTurn(id: string, attempt: number, until: number): Promise<void> {
  if (Date.now() > until) throw new CuadraError('conflict', `Deal ${id} is being changed by many calls at once; try again.`);
  await new Promise((r) => setTimeout(r, 1 + Math.random() * Math.min(40, 2 * (attempt + 1))));
}

/**
 * Changes one deal, exactly once, whatever runs at the same time: the change is computed from the
 * deal as read and written by one conditional update on its `version` (a concurrent change makes it
 * compute again on the new deal); its column and counter changes ride on the same write as an
 * intent (shared derived.ts) and are applied after it; the search index is widened before and
 * narrowed after. A deal carries one intent at a time (`settleInFlight`): a change waits until the
 * one before it has reached the columns, so a card's pull from a column never runs before its push
 * into it. Answers the deal as written.
 */
export async function changeDeal(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, id: string, change: DealChange): Promise<DealDoc> {
  const model = deals(ctx.db);
  const until = Date.now() + CHANGE_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    const d = await model.findOne({ _id: id, workspace: ctx.workspace }).lean();
    if (!d) throw new CuadraError('not_found', `No deal ${id} exists in this workspace.`);
    // The version condition below then also means "still none in flight": only a write that bumps it adds one.
    if (!(await settleInFlight(ctx.db, ctx.workspace, model, id, d))) {
      await waitTurn(id, attempt, until);
      continue;
    }
    const [pipelines, fields] = await Promise.all([readPipelines(ctx.db, ctx.workspace), readFields(ctx.db, ctx.workspace)]);
    const planned = await change(d, { pipelines, fields });
    if (!planned) return d;
    const next: DealDoc = { ...d, ...planned.set, updated_at: ctx.now, version: d.version + 1 };
    const history = planned.history ? [...d.history, planned.history].slice(-HISTORY_KEPT) : d.history;
    next.history = history;
    const keys = dealSearchKeys(next, fields);
    const intent = derivedIntent([...columnChanges(ctx.workspace, id, placement(d), placement(next)), ...(planned.changes ?? [])], ctx.now);
    const added = keys.filter((k) => !d.search_keys.includes(k));
    await addToIndex(ctx.db, ctx.workspace, 'deal', id, added);
    await markIntent(ctx.db, ctx.workspace, model, id, intent);
    const { _id, pending_derived: _p, version: _v, ...fieldsToSet } = next;
    const written = await model.collection.updateOne(
      { _id: id, workspace: ctx.workspace, version: d.version } as never,
      { $set: { ...fieldsToSet, search_keys: keys, version: next.version }, ...(intent ? { $push: { pending_derived: intent } } : {}) } as never,
    );
    if (written.modifiedCount !== 1) {
      await dropMarker(ctx.db, intent);
      await waitTurn(id, attempt, until);
      continue;
    }
    await applyIntent(ctx.db, model, id, intent);
    await removeFromIndex(ctx.db, ctx.workspace, 'deal', id, d.search_keys.filter((k) => !keys.includes(k)));
    return { ...next, search_keys: keys, pending_derived: [] };
  }
}

/** The input of a new deal (deals.create). */
export interface NewDeal {
  title: string;
  party_id?: string;
  amount?: number;
  currency?: string;
  owner_id?: string;
  expected_close?: string;
  pipeline?: string;
  stage_id?: string;
  lines?: Parameters<typeof dealLines>[0];
  custom?: Record<string, unknown>;
  tags?: string[];
  place?: Place;
}

/** Writes a new deal and puts its card in its column (the intent rides on the insert). */
export async function insertDeal(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now' | 'principal'>, input: NewDeal, opts: { id?: string } = {}): Promise<DealDoc> {
  const [pipelines, fields] = await Promise.all([readPipelines(ctx.db, ctx.workspace), readFields(ctx.db, ctx.workspace)]);
  checkCustom(fields, 'deal', input.custom, true);
  let pipeline: Pipeline | undefined;
  let stage: Stage;
  if (input.stage_id) {
    ({ pipeline, stage } = stageNamed(pipelines, input.stage_id, '/stage_id'));
    if (input.pipeline && pipeline.key !== input.pipeline && pipeline.id !== input.pipeline) throw new CuadraError('invalid_input', `Stage ${input.stage_id} is not in the pipeline ${input.pipeline}.`, { field: '/stage_id' });
  } else {
    pipeline = findPipeline(pipelines, input.pipeline);
    if (!pipeline || pipeline.status !== 'active') {
      throw new CuadraError('invalid_input', input.pipeline ? `No active pipeline "${input.pipeline}" exists in this workspace.` : 'This workspace has no pipeline yet: create one with pipelines.create.', { field: '/pipeline' });
    }
    stage = firstStageOf(pipeline, 'open');
  }
  if (stage.kind !== 'open') throw new CuadraError('invalid_input', 'A new deal starts in an open stage; win or lose it afterwards.', { field: '/stage_id' });
  const currency = input.currency ?? pipeline.currency;
  if (currency !== pipeline.currency) throw new CuadraError('invalid_input', `The pipeline ${pipeline.name} is in ${pipeline.currency}; its deals are too.`, { field: '/currency' });
  if (input.lines?.length && input.amount !== undefined) throw new CuadraError('invalid_input', 'A deal with lines takes its amount from them; give one or the other.', { field: '/amount' });
  const lines = dealLines(input.lines ?? []);
  // A given id (derived from what the deal is made of: a site's lead) makes a second insert fail at the unique _id.
  const id = opts.id ?? newId('dl');
  const orderKey = await keyInColumn(ctx, stage.id, null, input.place, '/place');
  const doc: DealDoc = {
    _id: id, workspace: ctx.workspace, title: input.title.trim(), party_id: input.party_id ?? null,
    party_name: input.party_id ? await partyName(ctx, input.party_id, '/party_id') : null,
    amount: amountOf(lines, input.amount), currency, owner_id: input.owner_id ?? null, expected_close: input.expected_close ?? null,
    pipeline_id: pipeline.id, stage_id: stage.id, status: 'open', order_key: orderKey, lines, custom: input.custom ?? {}, tags: input.tags ?? [],
    lost_reason: null, lost_note: null, stage_entered_at: ctx.now, closed_at: null, history: [{ from: null, to: stage.id, at: ctx.now, by: ctx.principal.actor.id }],
    search_keys: [], version: 1, pending_derived: [], created_at: ctx.now, updated_at: ctx.now,
  };
  doc.search_keys = dealSearchKeys(doc, fields);
  const intent = derivedIntent(columnChanges(ctx.workspace, id, null, placement(doc)), ctx.now);
  doc.pending_derived = intent ? [intent] : [];
  await addToIndex(ctx.db, ctx.workspace, 'deal', id, doc.search_keys);
  await markIntent(ctx.db, ctx.workspace, deals(ctx.db), id, intent);
  try {
    await createPositioned(deals(ctx.db), doc);
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
    // Only a given id can be taken: the deal exists already, and this intent's counters never apply.
    await dropMarker(ctx.db, intent);
    throw new CuadraError('conflict', `The deal ${id} exists already.`);
  }
  await applyIntent(ctx.db, deals(ctx.db), id, intent);
  return { ...doc, pending_derived: [] };
}

/** Custom values after an update, checked against the workspace's fields. */
export function updatedCustom(fields: FieldSetDoc, stored: Record<string, unknown>, given: Record<string, unknown> | undefined): Record<string, unknown> {
  checkCustom(fields, 'deal', given, false);
  return mergeCustom(stored, given);
}
