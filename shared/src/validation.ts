import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { assertWithinBounds, boundsFor, escapeToken } from './bounds.ts';
import { CuadraError } from './errors.ts';
import { SECRET_KEYWORD } from './secrets.ts';
import type { JsonSchema } from './tool.ts';

// ajv-formats is CommonJS; under Node's ESM loader its default export is the function itself.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * The calendar dates a `format: "date"` field accepts. The product adds days, months and years to
 * dates a caller gave (a due date 30 days after an issue date, a schedule, a forecast's horizon);
 * bounded here, no such sum leaves the calendar, so a date is refused at the field the caller sent,
 * never at one computed from it (issue 31, finding 14). Business dates fall well inside.
 */
export const DATE_RANGE = { min: '1900-01-01', max: '2999-12-31' } as const;

const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar date (RFC 3339 full-date) within {@link DATE_RANGE}. */
function calendarDateInRange(value: string): boolean {
  const m = CALENDAR_DATE.exec(value);
  if (!m || value < DATE_RANGE.min || value > DATE_RANGE.max) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const days = mo === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(mo) ? 30 : 31;
  return mo >= 1 && mo <= 12 && d >= 1 && d <= days;
}

/** An ajv instance with the product's options, formats and keywords; each schema is compiled once per instance. */
export function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: false, strict: true, coerceTypes: false, useDefaults: false });
  addFormats(ajv);
  ajv.addFormat('date', { type: 'string', validate: calendarDateInRange, compare: (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0) });
  // An annotation (like `writeOnly`): marks an output field secret (shared/src/secrets.ts); validates nothing.
  ajv.addKeyword({ keyword: SECRET_KEYWORD, schemaType: 'boolean' });
  return ajv;
}

/** JSON Pointer of the argument an ajv error is about (CONTRACT.md §3 step 5). */
export function pointerOf(error: ErrorObject): string {
  const base = error.instancePath;
  const params = error.params as Record<string, unknown>;
  const escape = escapeToken;
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') return `${base}/${escape(params.missingProperty)}`;
  if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') return `${base}/${escape(params.additionalProperty)}`;
  if (error.keyword === 'dependentRequired' && typeof params.missingProperty === 'string') return `${base}/${escape(params.missingProperty)}`;
  return base;
}

/** A person-readable sentence for an ajv error. */
export function sentenceOf(error: ErrorObject): string {
  const pointer = pointerOf(error);
  const where = pointer === '' ? 'The input' : `The argument ${pointer}`;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': return `${where} is required.`;
    case 'additionalProperties': return `${where} is not an argument this tool accepts.`;
    case 'enum': return `${where} must be one of: ${(params.allowedValues as unknown[]).map(String).join(', ')}.`;
    case 'false schema': return `${where} is not allowed here.`;
    case 'format': if (params.format === 'date') return `${where} must be a calendar date (YYYY-MM-DD) from ${DATE_RANGE.min} to ${DATE_RANGE.max}.`;
      return `${where} ${error.message ?? 'is not valid'}.`;
    default: return `${where} ${error.message ?? 'is not valid'}.`;
  }
}

/**
 * Compiles a schema into a function that throws `invalid_input` with the offending field. The
 * contract's input bounds (depth, sizes, Unicode; CONTRACT.md §9) run first, before ajv or anything
 * else walks the input, so every tool, every graph read and every composite query gets them.
 */
export function compileValidator(ajv: Ajv2020, schema: JsonSchema): (input: unknown) => void {
  const validate: ValidateFunction = ajv.compile(schema);
  const bounds = boundsFor(schema);
  return (input: unknown) => {
    assertWithinBounds(input, bounds);
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw new CuadraError('invalid_input', 'The request body must be a JSON object.', { field: '' });
    }
    if (!validate(input)) {
      const error = validate.errors![0];
      throw new CuadraError('invalid_input', sentenceOf(error), { field: pointerOf(error) });
    }
  };
}

/** An ajv instance made at its first use ({@link createAjv}): a module that may never validate makes none at import. */
export function lazyAjv(): () => Ajv2020 {
  let ajv: Ajv2020 | undefined;
  return () => (ajv ??= createAjv());
}

/**
 * {@link compileValidator} with the schema compiled at the first call rather than now — the same
 * ajv, options and bounds, so the same refusals; only when the code generation runs differs (ajv's
 * code generation was 0.36–0.70 CPU-s of each service's start, most of it for validators no call of
 * that process may need). A schema ajv rejects then throws at that first call: such a schema is
 * refused before a service runs by the build (scripts/build.ts compiles every tool's input schema)
 * and by the tests that import it.
 */
export function lazyValidator(ajv: () => Ajv2020, schema: JsonSchema): (input: unknown) => void {
  let validator: ((input: unknown) => void) | undefined;
  return (input: unknown) => (validator ??= compileValidator(ajv(), schema))(input);
}
