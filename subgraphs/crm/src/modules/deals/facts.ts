import type { CallFacts } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { findStage, readPipelines } from '../pipelines/model.ts';
import { deals } from './model.ts';

/**
 * What a stage change tells autonomy policies (stage rules are policies, not a rules engine): the
 * deal's amount (for `amount_over`), the kind of the stage it goes to (`stage_kind` open, won or
 * lost) and its pipeline's key. `stage` names the stage a call gives, or the first of a kind the
 * tool goes to (win → won).
 */
export async function moveFacts(ctx: { db: Connection; workspace: string }, dealId: string, to: { stage_id?: string; kind?: 'won' | 'lost' | 'open' }): Promise<CallFacts> {
  const [deal, set] = await Promise.all([deals(ctx.db).findOne({ _id: dealId, workspace: ctx.workspace }, { amount: 1, stage_id: 1, pipeline_id: 1 }).lean(), readPipelines(ctx.db, ctx.workspace)]);
  if (!deal) return {};
  const target = to.stage_id ? findStage(set, to.stage_id) : undefined;
  const pipeline = target?.pipeline ?? set.pipelines.find((p) => p.id === deal.pipeline_id);
  return { amount: deal.amount, stage_kind: target?.stage.kind ?? to.kind ?? null, pipeline: pipeline?.key ?? null };
}
