import {
  annotationsFor, assertReach, compileValidator, createAjv, CuadraError, DEFAULT_MAX_INPUT_BYTES, reaches, scopeFor, toCuadraError,
  type JsonSchema, type Principal, type RateLimiter, type Risk,
} from '@cuadra/shared';
import type { Catalog, PublicTool } from '../catalog.ts';
import { InvokePipeline, PipelineRefusal, type InvokeRequest, type InvokeResult } from '../pipeline.ts';

/**
 * A tool the gateway answers itself: it reads the gateway's own catalog, so no subgraph owns it.
 * Same shape as a subgraph tool's public catalog entry, so every surface lists it the same way.
 */
interface GatewayTool extends PublicTool {
  run(input: Record<string, unknown>, principal: Principal): Record<string, unknown>;
}

/** A compact search hit: enough to choose a tool, not its schema (that is what `tools.describe` is for). */
export interface ToolHit {
  name: string;
  module: string;
  risk: Risk;
  summary: string;
}

const SEARCH_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['query'],
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 200, description: 'Words describing what you want to do, e.g. "create invoice" or "list employees".' },
    module: { type: 'string', pattern: '^[a-z0-9_]+$', description: 'Only tools of this module (the part of the name before the dot).' },
    limit: { type: 'integer', minimum: 1, maximum: 50, default: 10 },
  },
};

const DESCRIBE_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 200, description: 'A tool name as tools.search returned it, e.g. "invoices.create".' } },
};

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

/**
 * How well a tool answers a query: name parts weigh most, then the module, then the
 * description. Each query word counts once, at its best match; a word matching nothing
 * costs nothing, so "make an invoice" still finds `invoices.create`.
 */
export function scoreTool(tool: Pick<PublicTool, 'name' | 'module' | 'description'>, query: string): number {
  const q = query.trim().toLowerCase();
  if (q === tool.name) return 1000;
  const nameWords = words(tool.name);
  const moduleWord = stem(tool.module);
  const descWords = new Set(words(tool.description));
  let score = tool.name.includes(q) ? 40 : 0;
  let matched = 0;
  for (const w of new Set(words(q))) {
    let best = 0;
    if (nameWords.includes(w)) best = w === moduleWord ? 12 : 10;
    else if (nameWords.some((n) => n.startsWith(w) && w.length >= 3)) best = 6;
    else if (descWords.has(w)) best = 3;
    else if (w.length >= 4 && [...descWords].some((d) => d.startsWith(w))) best = 1;
    if (best > 0) matched++;
    score += best;
  }
  // Tools matching more of the query's words rank above those matching one word strongly.
  return matched === 0 ? 0 : score + matched * 5;
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

function gatewayTool(name: string, description: string, input: JsonSchema): PublicTool {
  const tool = { name, module: name.split('.')[0], risk: 'read' as const };
  return { ...tool, description, scope: scopeFor(tool), input_schema: input, annotations: annotationsFor('read') };
}

/** The catalog tools' public entries (what listings and OpenAPI show). */
export const CATALOG_TOOLS: readonly PublicTool[] = [
  gatewayTool(
    'tools.search',
    'Find the tools for a task among those this credential reaches, best match first: name, module, risk and a one-line summary. Follow with tools.describe for a tool\'s input schema.',
    SEARCH_SCHEMA,
  ),
  gatewayTool(
    'tools.describe',
    'Describe one tool this credential reaches: its description, risk class, scope, annotations and JSON input schema.',
    DESCRIBE_SCHEMA,
  ),
];

/**
 * `tools.search` and `tools.describe`: read tools over the gateway's catalog, so an assistant
 * can find the right tool without loading the whole catalog into its context. They follow the
 * same steps as the invoke pipeline (authenticate → rate limit → tenant → reach → size →
 * validate) and see exactly what the credential reaches.
 */
export class GatewayTools {
  readonly #catalog: Catalog;
  readonly #pipeline: InvokePipeline;
  readonly #limiter: RateLimiter;
  readonly #tools: Map<string, GatewayTool>;
  readonly #validators: Map<string, (input: unknown) => void>;

  constructor(deps: { catalog: Catalog; pipeline: InvokePipeline; limiter: RateLimiter }) {
    this.#catalog = deps.catalog;
    this.#pipeline = deps.pipeline;
    this.#limiter = deps.limiter;
    const run: Record<string, GatewayTool['run']> = {
      'tools.search': (input, principal) => {
        const all = this.listFor(principal, { module: input.module as string | undefined });
        const { hits, total } = searchTools(all, input.query as string, (input.limit as number | undefined) ?? 10);
        return { tools: hits, total };
      },
      'tools.describe': (input, principal) => {
        const found = this.listFor(principal).find((t) => t.name === input.name);
        if (!found) throw new CuadraError('not_found', `This credential reaches no tool named "${String(input.name)}". Use tools.search to find one.`);
        return { tool: found };
      },
    };
    this.#tools = new Map(CATALOG_TOOLS.map((t) => [t.name, { ...t, run: run[t.name] }]));
    const ajv = createAjv();
    this.#validators = new Map([...this.#tools.values()].map((t) => [t.name, compileValidator(ajv, t.input_schema)]));
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** Every tool the principal reaches: the subgraphs' catalog and these, in one list. */
  listFor(principal: Principal, filter: { module?: string } = {}): PublicTool[] {
    const own = CATALOG_TOOLS.filter((t) => reaches(principal, t) && (!filter.module || t.module === filter.module));
    return [...this.#catalog.listFor(principal, filter), ...own];
  }

  /** Runs a gateway tool with the pipeline's checks; answers and refusals have the pipeline's shapes. */
  async invoke(req: InvokeRequest): Promise<InvokeResult> {
    const principal = await this.#pipeline.authenticate(req.authorization);
    let headers: Record<string, string> = {};
    try {
      headers = await this.#limiter.consume(principal);
    } catch (err) {
      const extra = (err as CuadraError).extra as { headers?: Record<string, string> } | undefined;
      throw new PipelineRefusal(toCuadraError(err), extra?.headers ?? {});
    }
    try {
      const tool = this.#tools.get(req.tool);
      if (!tool) throw new CuadraError('unknown_tool', `No tool is named "${req.tool}".`);
      InvokePipeline.checkTenant(principal, req.tenant);
      assertReach(principal, tool);
      const input = await req.body(DEFAULT_MAX_INPUT_BYTES);
      this.#validators.get(tool.name)!(input);
      const output = tool.run(input as Record<string, unknown>, principal);
      return { status: 200, body: { tool: tool.name, output }, headers };
    } catch (err) {
      throw new PipelineRefusal(toCuadraError(err), headers);
    }
  }
}
