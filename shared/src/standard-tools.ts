import type { Connection, Model } from 'mongoose';
import { CuadraError } from './errors.ts';
import { listNewestFirst, type SeriesOptions } from './paging.ts';
import { CURSOR_SCHEMA } from './queries.ts';
import type { JSONSchema } from 'json-schema-to-ts';
import { declareTool, type InputOf, type JsonSchema, type Tool } from './tool.ts';

/** A record's id as a tool takes it. */
export const ID_SCHEMA = { type: 'string', minLength: 1, maxLength: 64 } as const;

/** The `{id}` input of every get tool. */
export const ID_INPUT = {
  type: 'object', additionalProperties: false, required: ['id'],
  properties: { id: ID_SCHEMA },
} as const;

/** Building blocks of output schemas, written once (views' schemas in every module use them). */
export const TEXT_SCHEMA = { type: 'string' } as const;
export const NULLABLE_TEXT_SCHEMA = { type: ['string', 'null'] } as const;
export const DATE_TIME_SCHEMA = { type: 'string', format: 'date-time' } as const;

/** Output schema `{[key]: view}` of a tool answering one record. */
export function recordOutput(key: string, view: JsonSchema): JsonSchema {
  return { type: 'object', additionalProperties: false, required: [key], properties: { [key]: view } };
}

/** Output schema of a list page: `{rows, total?, next_cursor?}` (CONTRACT §9 bounded lists). */
export function pageOutput(row: JsonSchema): JsonSchema {
  return {
    type: 'object', additionalProperties: false, required: ['rows'],
    properties: { rows: { type: 'array', items: row }, total: { type: 'integer', minimum: 0 }, next_cursor: { type: 'string' } },
  };
}

/** Nullable: the schema or null. */
export function nullable(schema: JsonSchema): JsonSchema {
  return { anyOf: [schema, { type: 'null' }] };
}

/** What every list tool's description says about paging (CONTRACT §9 bounded lists). */
export const PAGING_NOTE = ' Pages: pass next_cursor back as cursor until it is absent; a filtered page may be short, even empty, and still carry next_cursor; total is given only without filters.';

/**
 * `<module>.get`: one record of the caller's workspace by id, answered as `{[key]: view(doc)}`, or
 * `not_found` ("No <what> <id> exists in this workspace.").
 */
export function defineGetTool<D>(options: {
  name: string; description: string; model: (db: Connection) => Model<any>; view: (doc: D) => unknown; key: string; what: string;
  /** JSON Schema of what `view` returns (the tool's output is `{[key]: view}`). */
  viewSchema?: JsonSchema;
}): Tool<{ id: string }, Record<string, unknown>> {
  return declareTool<{ id: string }, Record<string, unknown>>({
    name: options.name,
    description: options.description,
    risk: 'read',
    input: ID_INPUT,
    ...(options.viewSchema ? { output: recordOutput(options.key, options.viewSchema) } : {}),
    async handler(input, ctx) {
      const doc = (await options.model(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean()) as D | null;
      if (!doc) throw new CuadraError('not_found', `No ${options.what} ${input.id} exists in this workspace.`);
      return { [options.key]: options.view(doc) };
    },
  });
}

/** A list tool's input: its filters (each optional, typed from its schema), `limit` and `cursor`. */
export type ListInput<F> = { [K in keyof F]?: InputOf<F[K]> } & { limit?: number; cursor?: string };

/**
 * `<module>.list`: newest first, one bounded page by cursor ({@link listNewestFirst}). `filters` are
 * the tool's own input properties (besides `limit` and `cursor`); `match` turns the input into an
 * in-memory filter, or undefined when no filter applies (then `total` comes from the counter).
 * `before` runs first (a check that names a missing parent record).
 */
export function defineListTool<D, const F extends Record<string, JSONSchema> = {}, I extends ListInput<F> = ListInput<F>>(options: {
  name: string; description: string; model: (db: Connection) => Model<any>; view: (doc: D) => unknown;
  filters?: F; match?: (input: I) => ((doc: D) => boolean) | undefined; series?: SeriesOptions;
  /** The lower-cased term a series that keeps trigrams (search-grams.ts) reads its candidates by. */
  searchTerm?: (input: I) => string | undefined;
  before?: (input: I, ctx: { db: Connection; workspace: string }) => Promise<void>;
  /** JSON Schema of what `view` returns (the tool's output is a page of them). */
  viewSchema?: JsonSchema;
}): Tool<I, Record<string, unknown>> {
  return declareTool<I, Record<string, unknown>>({
    name: options.name,
    description: options.description + PAGING_NOTE,
    risk: 'read',
    input: {
      type: 'object', additionalProperties: false,
      properties: { ...(options.filters ?? {}), limit: { type: 'integer', minimum: 1, maximum: 100 }, cursor: CURSOR_SCHEMA },
    },
    ...(options.viewSchema ? { output: pageOutput(options.viewSchema) } : {}),
    async handler(input, ctx) {
      await options.before?.(input, ctx);
      return listNewestFirst<D, unknown>(options.model(ctx.db), { ...(options.series ?? {}), workspace: ctx.workspace, cursor: input.cursor, limit: input.limit ?? 20, match: options.match?.(input), searchTerm: options.searchTerm?.(input) }, options.view);
    },
  });
}

/** A case-insensitive search term, lower-cased, or undefined. */
export function searchTerm(search: string | undefined): string | undefined {
  return search ? search.toLowerCase() : undefined;
}
