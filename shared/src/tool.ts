import type { PeerGraph } from './peers.ts';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Connection } from 'mongoose';
import type { Logger } from './logger.ts';
import type { Principal } from './principal.ts';
import type { Governance } from './governance/index.ts';

/** Risk classes of CONTRACT.md §1: what policies and key patterns select on. */
export const RISKS = ['read', 'write', 'external', 'destructive'] as const;
export type Risk = (typeof RISKS)[number];

/** Tool names: `<tool module>.<action>`, lower case (CONTRACT.md §1). */
export const TOOL_NAME = /^[a-z0-9_]+(\.[a-z0-9_]+)+$/;

/** Default largest accepted input, in bytes (CONTRACT.md §3 step 5). */
export const DEFAULT_MAX_INPUT_BYTES = 256 * 1024;

/** A JSON Schema 2020-12 object schema, as written in a tool declaration. */
export type JsonSchema = Record<string, unknown>;

/** What a handler receives besides its validated input. */
export interface ToolContext {
  /** The caller, as asserted by the gateway and checked again here. */
  principal: Principal;
  /** The workspace every read and write of this call is sealed to. */
  workspace: string;
  /** This subgraph's own database. */
  db: Connection;
  log: Logger;
  /** The moment the call started; handlers use it instead of `new Date()` so a call has one clock. */
  now: Date;
  /** The shared governance stores (used by the governance tools: policies, approvals, ledger). */
  governance: Governance;
  /** What the owning service gives its own tools beyond the database (the gateway's identity store, catalog…). */
  services?: unknown;
  /** Reads another subgraph's graph for this workspace (a buyer from crm); `unavailable` when it does not answer. */
  graph?: PeerGraph;
}

/** When and why a tool is deprecated, and what replaces it. */
export interface ToolDeprecation {
  /** The day it was (or will be) deprecated, ISO 8601 (`2026-12-01` or a full timestamp). */
  since: string;
  /** The day after which it may stop answering, ISO 8601; absent: no date decided. */
  sunset?: string;
  /** The tool to call instead. */
  successor?: string;
}

/** One tool, declared once: REST, GraphQL, MCP, OpenAPI and the canvas all read this. */
export interface ToolDeclaration<Input = Record<string, unknown>, Output = Record<string, unknown>> {
  name: string;
  description: string;
  risk: Risk;
  /**
   * JSON Schema of the input. A secret field (a PIN, a password, a file holding a private key) says so
   * with `writeOnly: true`, at any depth: it is sealed at rest in a held approval, digested by HMAC,
   * shown as "[redacted]" to everyone (CONTRACT.md §10). The build refuses a field named like a secret
   * that does not (shared/src/secrets.ts).
   */
  input: JsonSchema;
  /**
   * JSON Schema of the handler's output object: published as the 200 answer in OpenAPI and as
   * `outputSchema` in MCP, and every output in the tests is checked against it. A secret in the
   * output (an API key, an invitation link) is marked `x-secret: true`, at any depth: given only in the
   * direct answer to the principal that ran the call (and its own replay); sealed at rest in
   * idempotency records and approvals, redacted for everyone else, never logged (CONTRACT.md §9, §10).
   */
  output?: JsonSchema;
  /** Largest accepted body in bytes; default {@link DEFAULT_MAX_INPUT_BYTES}. */
  maxInputBytes?: number;
  /**
   * Set when the tool is deprecated: every answer then carries `Deprecation` (RFC 9745), `Sunset`
   * when a date is set (RFC 8594) and a `Link` to its documentation and successor; OpenAPI marks the
   * operation `deprecated`, MCP the tool's `_meta`.
   */
  deprecated?: ToolDeprecation;
  /**
   * The money this call moves, in minor units, for policies' `amount_over` conditions
   * (e.g. an invoice's total). Absent or null: amount conditions never match.
   */
  amount?: (input: Input) => number | null;
  /**
   * Facts about the call that autonomy policies select on when they are not in the input but in
   * the record the call acts on (a deal's amount, the kind of stage it moves into), looked up
   * before the policy decides. `amount` (when a number) stands for {@link amount} in `amount_over`;
   * the others answer `conditions.facts`. A lookup that fails gives no facts: the handler then
   * gives its own refusal (the record is not there…).
   */
  facts?: (input: Input, ctx: { db: Connection; workspace: string }) => Promise<CallFacts>;
  /**
   * The effect when no autonomy policy of the workspace matches the call (otherwise `allow`): a tool
   * whose every use should wait for a person unless the owner says otherwise (an e-mail campaign to
   * thousands) declares `hold`. A workspace policy that matches — `allow` included — decides instead.
   */
  defaultEffect?: 'hold' | 'ask';
  /**
   * What the call would do, computed when a policy holds or asks for it and kept on the approval, so
   * the person who decides sees it (`approvals.get`, the inbox): a campaign's recipients after every
   * exclusion, its first send window and a rendered sample. A refusal it throws (`invalid_input`,
   * `not_found`, `conflict`) is the call's answer and nothing is held; any other failure is noted on
   * the approval instead of the preview.
   */
  preview?: (input: Input, ctx: ToolContext) => Promise<Record<string, unknown>>;
  handler: (input: Input, ctx: ToolContext) => Promise<Output>;
}

/** What a tool tells policies about one call ({@link ToolDeclaration.facts}). */
export type CallFacts = { amount?: number | null } & Record<string, string | number | boolean | null | undefined>;

/** A declared tool, with its module derived from its name. */
export interface Tool<Input = Record<string, unknown>, Output = Record<string, unknown>> extends ToolDeclaration<Input, Output> {
  module: string;
}

/** The input type a tool's JSON Schema describes (json-schema-to-ts): the schema is written once, the type follows it. */
export type InputOf<S> = S extends JSONSchema ? FromSchema<S> : never;

/**
 * Declares a tool. The handler's input type is inferred from the `input` JSON Schema (one schema
 * per shape: what ajv validates at run time is what the type checker sees), its output type from
 * what the handler returns.
 */
export function defineTool<const S extends JsonSchema, Output = Record<string, unknown>>(
  decl: Omit<ToolDeclaration<InputOf<S>, Output>, 'input'> & { input: S },
): Tool<InputOf<S>, Output> {
  return { ...decl, input: decl.input as JsonSchema, module: decl.name.split('.')[0] };
}

/**
 * A tool whose input type is given rather than inferred: for the shared factories only
 * (standard-tools.ts), whose schemas are assembled from their options and typed there once.
 */
export function declareTool<Input, Output>(decl: ToolDeclaration<Input, Output>): Tool<Input, Output> {
  return { ...decl, module: decl.name.split('.')[0] };
}

/** The OAuth scope that reaches a tool of this risk (CONTRACT.md §1). */
export function scopeFor(tool: Pick<Tool, 'risk' | 'module'>): string {
  if (tool.module === 'sites') return 'sites.edit';
  return tool.risk === 'read' ? 'tools:read' : 'tools';
}

/** MCP tool annotations derived from the risk class (CONTRACT.md §2). */
export function annotationsFor(risk: Risk): { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean } {
  return {
    readOnlyHint: risk === 'read',
    destructiveHint: risk === 'destructive',
    idempotentHint: risk === 'read',
    openWorldHint: risk === 'external',
  };
}

/** The public catalog entry of a tool (GET /v1/tools shape, plus routing facts for the gateway). */
export interface CatalogEntry {
  name: string;
  description: string;
  module: string;
  risk: Risk;
  scope: string;
  input_schema: JsonSchema;
  /** The output's schema, when the tool declares one. */
  output_schema?: JsonSchema;
  annotations: ReturnType<typeof annotationsFor>;
  /** Present when the tool is deprecated. */
  deprecated?: ToolDeprecation;
  /** The subgraph that owns and runs the tool. Not shown to callers. */
  subgraph: string;
  max_input_bytes: number;
}

/** Catalog entry for a declared tool owned by `subgraph`. */
export function catalogEntry(tool: Tool<any, any>, subgraph: string): CatalogEntry {
  return {
    name: tool.name,
    description: tool.description,
    module: tool.module,
    risk: tool.risk,
    scope: scopeFor(tool),
    input_schema: tool.input,
    ...(tool.output ? { output_schema: tool.output } : {}),
    annotations: annotationsFor(tool.risk),
    ...(tool.deprecated ? { deprecated: tool.deprecated } : {}),
    subgraph,
    max_input_bytes: tool.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES,
  };
}
