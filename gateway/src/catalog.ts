import { readFileSync } from 'node:fs';
import { compileValidator, createAjv, reaches, RISKS, TOOL_NAME, type CatalogEntry, type CatalogReads, type Principal } from '@cuadra/shared';

/** The public fields of a catalog entry (GET /v1/tools, CONTRACT.md §2). */
export type PublicTool = Omit<CatalogEntry, 'subgraph' | 'max_input_bytes'>;

const BOOLEAN = { type: 'boolean' } as const;

/** JSON Schema of a {@link PublicTool} (`tools.describe`); the tool's own schemas are JSON Schemas, open here. */
export const PUBLIC_TOOL_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['name', 'description', 'module', 'risk', 'scope', 'input_schema', 'annotations'],
  properties: {
    name: { type: 'string', pattern: TOOL_NAME.source },
    description: { type: 'string' },
    module: { type: 'string' },
    risk: { enum: [...RISKS] },
    scope: { enum: ['tools', 'tools:read', 'sites.edit'] },
    input_schema: { type: 'object' },
    output_schema: { type: 'object' },
    deprecated: {
      type: 'object', additionalProperties: false, required: ['since'],
      properties: { since: { type: 'string' }, sunset: { type: 'string' }, successor: { type: 'string', pattern: TOOL_NAME.source } },
    },
    annotations: {
      type: 'object', additionalProperties: false,
      required: ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'],
      properties: { readOnlyHint: BOOLEAN, destructiveHint: BOOLEAN, idempotentHint: BOOLEAN, openWorldHint: BOOLEAN },
    },
  },
} as const;

const BUILT = new URL('../generated/catalog.json', import.meta.url);
const products = new Map<string, { tools: CatalogEntry[]; reads: CatalogReads }>();

/** What the build wrote (gateway/generated/catalog.json): the tools and the composite reads, read once per process. */
export function buildProducts(file = BUILT): { tools: CatalogEntry[]; reads: CatalogReads } {
  let built = products.get(file.href);
  if (!built) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      throw new Error('gateway/generated/catalog.json is missing: run `npm run build` first.');
    }
    built = JSON.parse(text) as { tools: CatalogEntry[]; reads: CatalogReads };
    products.set(file.href, built);
  }
  return built;
}

/**
 * The tool catalog of all subgraphs. Each tool's validator is compiled the first time the tool is
 * validated here: every schema has already been compiled, strictly, by its owner's registry when
 * that service started (a schema ajv rejects stops the owner, shared registry.ts), so compiling all
 * of them again at the gateway's start (a third of its start-up CPU) checked nothing new.
 */
export class Catalog {
  readonly entries: readonly CatalogEntry[];
  readonly #byName: Map<string, CatalogEntry>;
  readonly #validators = new Map<string, (input: unknown) => void>();
  readonly #ajv = createAjv();

  constructor(entries: readonly CatalogEntry[]) {
    this.entries = entries;
    this.#byName = new Map(entries.map((e) => [e.name, e]));
  }

  /** Reads the catalog the build wrote (gateway/generated/catalog.json). */
  static fromBuild(file?: URL): Catalog {
    return new Catalog(buildProducts(file).tools);
  }

  get(name: string): CatalogEntry | undefined {
    return this.#byName.get(name);
  }

  /** Throws `invalid_input` with the JSON Pointer of the offending argument. */
  validate(name: string, input: unknown): void {
    let validator = this.#validators.get(name);
    if (!validator) {
      validator = compileValidator(this.#ajv, this.#byName.get(name)!.input_schema);
      this.#validators.set(name, validator);
    }
    validator(input);
  }

  /** Exactly the tools this principal reaches (scope, role, key patterns), optionally filtered. */
  listFor(principal: Principal, filter: { module?: string; search?: string } = {}): PublicTool[] {
    const search = filter.search?.toLowerCase();
    return this.entries
      .filter((e) => reaches(principal, e))
      .filter((e) => !filter.module || e.module === filter.module)
      .filter((e) => !search || e.name.includes(search) || e.description.toLowerCase().includes(search))
      .map(({ subgraph: _s, max_input_bytes: _m, ...pub }) => pub);
  }
}
