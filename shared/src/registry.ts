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

/** A subgraph's tools, checked and compiled once at start-up. */
export interface ToolRegistry {
  readonly subgraph: string;
  readonly tools: ReadonlyMap<string, Tool<any, any>>;
  get(name: string): Tool<any, any> | undefined;
  /** Throws `invalid_input` (with `field`) when the input does not fit the tool's schema. */
  validate(name: string, input: unknown): void;
}

/**
 * Builds the registry of one subgraph. Throws at start-up on a duplicate name, a bad name,
 * a tool whose module the subgraph does not own, an unknown risk or a schema ajv rejects.
 */
export function createRegistry(subgraph: string, ownedModules: readonly string[], tools: readonly Tool<any, any>[]): ToolRegistry {
  let ajv: Ajv2020 | undefined;
  const byName = new Map<string, Tool<any, any>>();
  const validators = new Map<string, (input: unknown) => void>();
  for (const tool of tools) {
    if (!TOOL_NAME.test(tool.name)) throw new Error(`Tool name "${tool.name}" must look like <module>.<action> in lower case.`);
    if (byName.has(tool.name)) throw new Error(`Tool "${tool.name}" is declared twice.`);
    if (!ownedModules.includes(tool.module)) throw new Error(`Subgraph "${subgraph}" does not own the tool module "${tool.module}" (of ${tool.name}).`);
    if (!RISKS.includes(tool.risk)) throw new Error(`Tool "${tool.name}" has unknown risk "${tool.risk}".`);
    if (!tool.description || tool.description.length < 10) throw new Error(`Tool "${tool.name}" needs a description.`);
    if (tool.input.type !== 'object') throw new Error(`Tool "${tool.name}" input schema must be an object schema.`);
    byName.set(tool.name, tool);
    let validator = compiledBySchema.get(tool.input);
    if (!validator) {
      ajv ??= createAjv();
      validator = compileValidator(ajv, tool.input);
      compiledBySchema.set(tool.input, validator);
    }
    validators.set(tool.name, validator);
  }
  return {
    subgraph,
    tools: byName,
    get: (name) => byName.get(name),
    validate(name, input) {
      validators.get(name)!(input);
    },
  };
}
