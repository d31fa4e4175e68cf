import { CuadraError, patternsCover, rolePatternsOf, TOOL_NAME, type DomainEventType, type Principal, type ToolContext } from '@cuadra/shared';
import { CronExpressionParser } from 'cron-parser';
import type { Connection } from 'mongoose';
import { aiModels } from '../modules/ai_models/model.ts';
import type { AgentTrigger } from '../modules/agents/model.ts';
import { EMBEDDED_MODEL_ID } from './embedded.ts';

/** The workspace's time zone for schedules (Colombian workspaces keep Bogotá's calendar, CONTRACT §10). */
export const SCHEDULE_TIME_ZONE = 'America/Bogota';

/** `invalid_input` at `/model` unless the model is the embedded one or an active model of the workspace. */
export async function checkModel(db: Connection, workspace: string, model: string): Promise<string> {
  const id = model.trim();
  if (id === EMBEDDED_MODEL_ID) return id;
  const found = await aiModels(db).exists({ _id: id, workspace, status: 'active' });
  if (!found) throw new CuadraError('invalid_input', `No active model ${id} exists in this workspace (ai_models.list; "embedded" is the built-in one).`, { field: '/model' });
  return id;
}

/**
 * Nobody gives an agent more than they reach themselves (as nobody grants a key or role more,
 * `mayGrant`): every tool pattern of the agent must be covered by the caller's role and, for a
 * narrowed key, by its patterns. The agent's own role (`agent`) narrows it further on every call.
 */
export function checkGrant(principal: Principal, patterns: readonly string[]): void {
  const own = rolePatternsOf(principal);
  if (!own || !patternsCover(own, patterns) || (principal.patterns && principal.patterns.length > 0 && !patternsCover(principal.patterns, patterns))) {
    throw new CuadraError('policy_denied', 'An agent cannot be given tool patterns beyond what the caller\'s own role and key reach.');
  }
}

/** `invalid_input` at `/tool_values/<tool>` for a key that is not a tool name. */
export function checkToolValues(values: Record<string, unknown>): Record<string, Record<string, unknown>> {
  for (const [tool, v] of Object.entries(values)) {
    if (!TOOL_NAME.test(tool)) throw new CuadraError('invalid_input', `"${tool.slice(0, 100)}" is not a tool name.`, { field: `/tool_values/${tool.replace(/~/g, '~0').replace(/\//g, '~1')}` });
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new CuadraError('invalid_input', 'Fixed values are an object of arguments.', { field: `/tool_values/${tool}` });
  }
  return values as Record<string, Record<string, unknown>>;
}

/** `invalid_input` at `/tool_fields/<tool>` for a key that is not a tool name (the paths are checked by the input schema). */
export function checkToolFields(fields: Record<string, string[]>): Record<string, string[]> {
  for (const tool of Object.keys(fields)) {
    if (!TOOL_NAME.test(tool)) throw new CuadraError('invalid_input', `"${tool.slice(0, 100)}" is not a tool name.`, { field: `/tool_fields/${tool.replace(/~/g, '~0').replace(/\//g, '~1')}` });
  }
  return fields;
}

/** The next time a cron schedule fires after `after`, in the workspace's time zone; `invalid_input` at `/trigger/cron` for a bad expression. */
export function nextScheduled(cron: string, after: Date): Date {
  try {
    return CronExpressionParser.parse(cron, { currentDate: after, tz: SCHEDULE_TIME_ZONE }).next().toDate();
  } catch {
    throw new CuadraError('invalid_input', `"${cron.slice(0, 100)}" is not a cron schedule (minute hour day-of-month month day-of-week).`, { field: '/trigger/cron' });
  }
}

/** The trigger as stored, with its defaults, and when it next starts a run. */
export function triggerOf(input: { kind: string; cron?: string; tools?: string[]; outcome?: string; event?: string; input?: string } | null | undefined, now: Date): { trigger: AgentTrigger | null; next_run_at: Date | null } {
  if (!input) return { trigger: null, next_run_at: null };
  if (input.kind === 'event') {
    return { trigger: { kind: 'event', event: input.event as DomainEventType, input: input.input ?? `The event ${input.event} happened; its record is given below.` }, next_run_at: null };
  }
  if (input.kind === 'schedule') {
    const cron = input.cron!.trim();
    return { trigger: { kind: 'schedule', cron, input: input.input ?? 'Scheduled run.' }, next_run_at: nextScheduled(cron, now) };
  }
  return { trigger: { kind: 'ledger', tools: input.tools!, outcome: input.outcome ?? 'ok', input: input.input ?? 'An action happened on the ledger.' }, next_run_at: null };
}

/**
 * Where a trigger that follows the ledger starts: the end of the workspace's chain now, so the
 * entries from this moment on start runs — not the workspace's history, and none missed between
 * this change and the runtime's next look. Null for a schedule (or no trigger).
 */
export async function triggerStart(trigger: AgentTrigger | null, ctx: Pick<ToolContext, 'governance' | 'workspace'>): Promise<number | null> {
  if (trigger?.kind !== 'event' && trigger?.kind !== 'ledger') return null;
  const head = await ctx.governance.ledger.entries.findOne({ workspace: ctx.workspace }, { seq: 1 }).sort({ seq: -1 }).lean();
  return head?.seq ?? 0;
}
