import { CuadraError, daysBetween, mapSecrets, secretShape, type JsonSchema } from '@cuadra/shared';
import { SELECTOR_TYPES, type Block } from './schema.ts';

/** Largest agenda window, in days (specification §2.6, §8). */
export const AGENDA_MAX_DAYS = 400;

/** What the cross-reference checks need to know about the catalog. */
export interface ToolLookup {
  (name: string): { risk: string; input_schema?: JsonSchema } | undefined;
}

/** Every block of a tree with its JSON Pointer, depth first, in document order. */
export function* walkBlocks(blocks: readonly Block[], base = '/blocks'): Generator<{ block: Block; pointer: string }> {
  for (let i = 0; i < blocks.length; i++) {
    const pointer = `${base}/${i}`;
    yield { block: blocks[i], pointer };
    if (blocks[i].children) yield* walkBlocks(blocks[i].children!, `${pointer}/children`);
  }
}

const refuse = (field: string, message: string): never => {
  throw new CuadraError('invalid_input', message, { field });
};

/**
 * The rules of specification §2.2–2.9 that JSON Schema cannot say, checked after the schema
 * with the same refusal (422 `invalid_input`, `field` = JSON Pointer into the input):
 * a selector key is unique and every `bind.block`/`inputs.block` names one; `inputs.param`
 * names a params control; `not_before` names a date param; an action's tool, and a result's
 * read tool, are registered; an action fixes none of its tool's secret arguments (a dashboard is
 * stored as given and shown to everyone who reads it; CONTRACT §10); an agenda window is at most 400 days.
 */
export function checkDashboardRules(blocks: readonly Block[], tools: ToolLookup, base = '/blocks'): void {
  const selectors = new Map<string, string>();
  const keys = new Map<string, string>();
  const params = new Map<string, string>();
  for (const { block, pointer } of walkBlocks(blocks, base)) {
    if (block.key) {
      if (keys.has(block.key)) refuse(`${pointer}/key`, `The key "${block.key}" is already used by the block at ${keys.get(block.key)}.`);
      keys.set(block.key, pointer);
      if ((SELECTOR_TYPES as readonly string[]).includes(block.type)) selectors.set(block.key, pointer);
    }
    for (const [i, control] of (block.params ?? []).entries()) {
      if (params.has(control.key)) refuse(`${pointer}/params/${i}/key`, `The param key "${control.key}" is used twice.`);
      params.set(control.key, control.type ?? 'text');
    }
  }
  for (const { block, pointer } of walkBlocks(blocks, base)) {
    if (block.bind && !selectors.has(block.bind.block)) {
      refuse(`${pointer}/bind/block`, `No records, table or chart block has the key "${block.bind.block}" to bind to.`);
    }
    for (const [i, input] of (block.inputs ?? []).entries()) {
      if (input.block !== undefined && !selectors.has(input.block)) refuse(`${pointer}/inputs/${i}/block`, `No records, table or chart block has the key "${input.block}".`);
      if (input.param !== undefined && !params.has(input.param)) refuse(`${pointer}/inputs/${i}/param`, `No params control has the key "${input.param}".`);
      if (input.block === undefined && input.param === undefined) refuse(`${pointer}/inputs/${i}`, 'An input reads a selector block (block) or a params control (param).');
    }
    for (const [i, control] of (block.params ?? []).entries()) {
      if (control.not_before !== undefined && params.get(control.not_before) !== 'date') {
        refuse(`${pointer}/params/${i}/not_before`, `not_before names "${control.not_before}", which is not a date param.`);
      }
    }
    for (const [i, action] of (block.actions ?? []).entries()) {
      const tool = action.tool !== undefined ? tools(action.tool) : undefined;
      if (action.tool !== undefined && !tool) refuse(`${pointer}/actions/${i}/tool`, `No tool is named "${action.tool}".`);
      if (tool && action.values) {
        mapSecrets(action.values, secretShape(tool.input_schema), (_secret, at) => refuse(`${pointer}/actions/${i}/values${at}`, `A dashboard cannot hold a secret argument of ${action.tool}; the person running the action types it.`));
      }
    }
    if (block.result) {
      const tool = tools(block.result.tool);
      if (!tool) refuse(`${pointer}/result/tool`, `No tool is named "${block.result.tool}".`);
      else if (tool.risk !== 'read') refuse(`${pointer}/result/tool`, `A result block shows a read tool; ${block.result.tool} is ${tool.risk}.`);
    }
    const agenda = block.agenda;
    if (agenda?.from && agenda.to) {
      const days = daysBetween(agenda.from, agenda.to);
      if (days < 0) refuse(`${pointer}/agenda/to`, 'The agenda ends before it starts.');
      if (days + 1 > AGENDA_MAX_DAYS) refuse(`${pointer}/agenda/to`, `The agenda window is at most ${AGENDA_MAX_DAYS} days.`);
    }
  }
}
