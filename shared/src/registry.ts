import type { Ajv2020 } from 'ajv/dist/2020.js';
import { createAjv, compileValidator } from './validation.ts';
import { RISKS, TOOL_NAME, type Tool } from './tool.ts';

/**
 * Each tool's validator, by its input schema (the declaration's own object): a process that builds a
 * subgraph's registry again — a test worker running one module test file after another, each starting
 * the subgraph — compiles each schema once, not once per registry (ajv's code generation was ~15 % of
 * a subgraph's start-up CPU). The first registry to meet a schema still compiles it, and refuses it.
 */
const compiledBySchema = new WeakMap<object, (input: unknown) => void>();

/** A subgraph's tools, checked at creation; each input schema compiled once per process ({@link createRegistry}). */
export interface ToolRegistry {
  readonly subgraph: string;
  readonly tools: ReadonlyMap<string, Tool<any, any>>;
  get(name: string): Tool<any, any> | undefined;
  /** Throws `invalid_input` (with `field`) when the input does not fit the tool's schema. */
  validate(name: string, input: unknown): void;
}

/** When a registry compiles its tools' input schemas (see {@link createRegistry}). */
export type SchemaCompilation = 'at-creation' | 'at-first-call';

/**
 * Builds the registry of one subgraph. Throws at once on a duplicate name, a bad name, a tool whose
 * module the subgraph does not own, an unknown risk or a non-object input schema.
 *
 * `compile` says when each tool's input schema becomes a validator. `'at-creation'` (the default:
 * the build, the tests) compiles every one now, so a schema ajv rejects throws here. `'at-first-call'`
 * (a service's start: shared/src/subgraph.ts, the gateway's own tools) compiles a tool's schema at its
 * first `validate` — the same ajv options and bounds, so the same refusals; a start then spends no CPU
 * on the validators of tools no call reaches (ajv's code generation was 0.36–0.70 CPU-s of every
 * service's start). A schema ajv rejects is still refused before any service runs: `npm run build`
 * (which `npm start` and `npm test` run when an input changed) compiles every tool's schema
 * ({@link compileEveryInput}) and fails, and shared/test/registry.test.ts holds it.
 */
export function createRegistry(subgraph: string, ownedModules: readonly string[], tools: readonly Tool<any, any>[], options: { compile?: SchemaCompilation } = {}): ToolRegistry {
  let ajv: Ajv2020 | undefined;
  const byName = new Map<string, Tool<any, any>>();
  // One validator per schema object, kept in compiledBySchema: a registry keeps no second map by name.
  const validatorOf = (tool: Tool<any, any>): ((input: unknown) => void) => {
    let validator = compiledBySchema.get(tool.input);
    if (!validator) {
      ajv ??= createAjv();
      validator = compileValidator(ajv, tool.input);
      compiledBySchema.set(tool.input, validator);
    }
    return validator;
  };
  for (const tool of tools) {
    if (!TOOL_NAME.test(tool.name)) throw new Error(`Tool name "${tool.name}" must look like <module>.<action> in lower case.`);
    if (byName.has(tool.name)) throw new Error(`Tool "${tool.name}" is declared twice.`);
    if (!ownedModules.includes(tool.module)) throw new Error(`Subgraph "${subgraph}" does not own the tool module "${tool.module}" (of ${tool.name}).`);
    if (!RISKS.includes(tool.risk)) throw new Error(`Tool "${tool.name}" has unknown risk "${tool.risk}".`);
    if (!tool.description || tool.description.length < 10) throw new Error(`Tool "${tool.name}" needs a description.`);
    if (tool.input.type !== 'object') throw new Error(`Tool "${tool.name}" input schema must be an object schema.`);
    byName.set(tool.name, tool);
    if (options.compile !== 'at-first-call') validatorOf(tool);
  }
  return {
    subgraph,
    tools: byName,
    get: (name) => byName.get(name),
    validate(name, input) {
      validatorOf(byName.get(name)!)(input);
    },
  };
}

/**
 * Compiles every tool's input schema with the services' ajv options (as a registry does), throwing on
 * the first schema ajv rejects, named by its tool: the build's check (scripts/build.ts), since services
 * compile a schema only at its tool's first call.
 */
export function compileEveryInput(tools: readonly Tool<any, any>[]): void {
  const ajv = createAjv();
  for (const tool of tools) {
    try {
      compileValidator(ajv, tool.input);
    } catch (err) {
      throw new Error(`Tool "${tool.name}": ajv rejects its input schema: ${(err as Error).message}`);
    }
  }
}
