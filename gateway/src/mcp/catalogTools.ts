import { CuadraError, defineTool, RISKS, TOOL_NAME, type InputOf, type JsonSchema, type Risk, type ToolContext } from '@cuadra/shared';
import { PUBLIC_TOOL_SCHEMA, type Catalog, type PublicTool } from '../catalog.ts';

/** A compact search hit: enough to choose a tool, not its schema (that is what `tools.describe` is for). */
export interface ToolHit {
  name: string;
  module: string;
  risk: Risk;
  summary: string;
}

const SEARCH_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['query'],
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 200, description: 'Words describing what you want to do, e.g. "create invoice" or "list employees".' },
    module: { type: 'string', pattern: '^[a-z0-9_]+$', description: 'Only tools of this module (the part of the name before the dot).' },
    // Not `default: 10`: ajv does not fill defaults here, so the inferred type would claim a limit that may be absent.
    limit: { type: 'integer', minimum: 1, maximum: 50, description: 'Hits at most; 10 when absent.' },
  },
} as const;

const DESCRIBE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 200, description: 'A tool name as tools.search returned it, e.g. "invoices.create".' } },
} as const;

/** JSON Schema of a {@link ToolHit}. */
const TOOL_HIT_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['name', 'module', 'risk', 'summary'],
  properties: { name: { type: 'string', pattern: TOOL_NAME.source }, module: { type: 'string' }, risk: { enum: [...RISKS] }, summary: { type: 'string', maxLength: 160 } },
} as const;

/** Output of `tools.search`: the best hits and how many tools matched in all. */
const SEARCH_OUTPUT: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['tools', 'total'],
  properties: { tools: { type: 'array', maxItems: 50, items: TOOL_HIT_SCHEMA }, total: { type: 'integer', minimum: 0 } },
};

/** Output of `tools.describe`. */
const DESCRIBE_OUTPUT: JsonSchema = { type: 'object', additionalProperties: false, required: ['tool'], properties: { tool: PUBLIC_TOOL_SCHEMA } };

/** Lower-case words of a text; a trailing plural "s" is dropped so "invoice" finds "invoices". */
function words(text: string): string[] {
  return text.toLowerCase().split(/[^a-z0-9áéíóúñü]+/).filter((w) => w.length > 0).map(stem);
}

function stem(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

/** First sentence of a description, at most 160 characters. */
function summaryOf(description: string): string {
  const first = /^.*?[.!?](\s|$)/.exec(description)?.[0]?.trim() ?? description;
  return first.length <= 160 ? first : `${first.slice(0, 157)}…`;
}

/** Words that say nothing about a task (English and Spanish, the languages of the catalog's users). */
const STOP_WORDS = new Set([
  'a', 'an', 'the', 'of', 'for', 'to', 'in', 'on', 'and', 'or', 'with', 'by', 'from', 'my', 'our', 'all', 'some', 'i', 'we', 'me',
  'de', 'del', 'la', 'el', 'lo', 'las', 'los', 'un', 'una', 'uno', 'y', 'o', 'en', 'con', 'por', 'para', 'mi', 'mis',
]);

/**
 * How well a tool answers a query: name parts weigh most, then the module, then the
 * description. Each query word counts once, at its best match; a word matching nothing
 * costs nothing, so "make an invoice" still finds `invoices.create`. Among names matching the
 * same words, the one the query covers more of ranks first (`invoices.create` before
 * `invoices.recurring_create` for "create invoice").
 */
export function scoreTool(tool: Pick<PublicTool, 'name' | 'module' | 'description'>, query: string): number {
  const q = query.trim().toLowerCase();
  if (q === tool.name) return 1000;
  const nameWords = words(tool.name);
  const moduleWord = stem(tool.module);
  const descWords = new Set(words(tool.description));
  let score = tool.name.includes(q) ? 40 : 0;
  let matched = 0;
  let nameMatched = 0;
  for (const w of new Set(words(q))) {
    if (STOP_WORDS.has(w)) continue;
    let best = 0;
    if (nameWords.includes(w)) {
      best = w === moduleWord ? 12 : 10;
      nameMatched++;
    }
    else if (nameWords.some((n) => n.startsWith(w) && w.length >= 3)) best = 6;
    else if (descWords.has(w)) best = 3;
    else if (w.length >= 4 && [...descWords].some((d) => d.startsWith(w))) best = 1;
    if (best > 0) matched++;
    score += best;
  }
  // Tools matching more of the query's words rank above those matching one word strongly.
  return matched === 0 ? 0 : score + matched * 5 + Math.round((8 * nameMatched) / nameWords.length);
}

/** Ranks the tools against a query; ties by name, so the order is stable. */
export function searchTools(tools: readonly PublicTool[], query: string, limit: number): { hits: ToolHit[]; total: number } {
  const scored = tools
    .map((t) => ({ t, score: scoreTool(t, query) }))
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.t.name.localeCompare(b.t.name));
  return {
    hits: scored.slice(0, limit).map(({ t }) => ({ name: t.name, module: t.module, risk: t.risk, summary: summaryOf(t.description) })),
    total: scored.length,
  };
}

/** `tools.search` over the tools a principal reaches. */
function searchOutput(reached: readonly PublicTool[], input: InputOf<typeof SEARCH_SCHEMA>): Record<string, unknown> {
  const inModule = input.module ? reached.filter((t) => t.module === input.module) : reached;
  const { hits, total } = searchTools(inModule, input.query, input.limit ?? 10);
  return { tools: hits, total };
}

/** `tools.describe` of one tool a principal reaches. */
function describeOutput(reached: readonly PublicTool[], input: InputOf<typeof DESCRIBE_SCHEMA>): Record<string, unknown> {
  const found = reached.find((t) => t.name === input.name);
  if (!found) throw new CuadraError('not_found', `This credential reaches no tool named "${input.name}". Use tools.search to find one.`);
  return { tool: found };
}

/** The catalog a gateway-owned tool reads, from its context (`services.catalog`). */
function catalogOf(ctx: ToolContext): Catalog {
  const catalog = (ctx.services as { catalog?: Catalog } | undefined)?.catalog;
  if (!catalog) throw new CuadraError('internal', 'This tool runs only in the gateway.');
  return catalog;
}

/**
 * `tools.search`: declared like any tool, so the gateway's own tool owner can run it (it reads
 * `services.catalog`).
 */
export const searchTool = defineTool({
  name: 'tools.search',
  description: 'Find the tools for a task among those this credential reaches, best match first: name, module, risk and a one-line summary. Follow with tools.describe for a tool\'s input schema.',
  risk: 'read',
  input: SEARCH_SCHEMA,
  output: SEARCH_OUTPUT,
  handler: async (input, ctx) => searchOutput(catalogOf(ctx).listFor(ctx.principal), input),
});

/** `tools.describe`: one tool's description, risk, scope, annotations and input schema. */
export const describeTool = defineTool({
  name: 'tools.describe',
  description: 'Describe one tool this credential reaches: its description, risk class, scope, annotations and JSON input schema.',
  risk: 'read',
  input: DESCRIBE_SCHEMA,
  output: DESCRIBE_OUTPUT,
  handler: async (input, ctx) => describeOutput(catalogOf(ctx).listFor(ctx.principal), input),
});
