/**
 * JSON Schema → the subset llama.cpp's JSON-schema grammars take (node-llama-cpp's
 * `GbnfJsonSchema`): types, properties with `required`, enums, consts, arrays, `oneOf`, string
 * lengths and the date formats. Keywords the grammar cannot enforce (patterns, number bounds,
 * other formats) are dropped here and checked where they always are: by the tool's own validator
 * in the pipeline, which refuses a call that does not fit with `invalid_input`.
 */
export type GrammarSchema = Record<string, unknown>;

const FORMATS = new Set(['date', 'date-time', 'time']);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']);
/** The longest free string the grammar lets the embedded model write. */
export const MAX_STRING = 50;

/**
 * The grammar-ready form of `schema`. Only the properties a call needs (`required`) and those
 * listed in `keep` are offered: a small model writes what it must and stops, which is what makes
 * its output short and parseable.
 */
export function grammarSchema(schema: unknown, depth = 0): GrammarSchema {
  if (depth > 8 || !schema || typeof schema !== 'object') return { type: ['string', 'number', 'boolean', 'null'] };
  const s = schema as Record<string, unknown>;
  if ('const' in s) return { const: s.const as string };
  if (Array.isArray(s.enum)) return { enum: s.enum.filter((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v)) };
  const alternatives = (s.oneOf ?? s.anyOf) as unknown[] | undefined;
  if (Array.isArray(alternatives) && alternatives.length > 0) return { oneOf: alternatives.map((a) => grammarSchema(a, depth + 1)) };
  const type = Array.isArray(s.type) ? s.type.filter((t) => TYPES.has(t as string)) : s.type;
  if (type === 'object' || (type === undefined && s.properties)) {
    const properties = (s.properties ?? {}) as Record<string, unknown>;
    const required = Array.isArray(s.required) ? (s.required as string[]).filter((k) => k in properties) : [];
    const out: GrammarSchema = { type: 'object', properties: Object.fromEntries(required.map((k) => [k, grammarSchema(properties[k], depth + 1)])), required };
    if (required.length === 0 && Object.keys(properties).length === 0 && s.additionalProperties !== false) out.additionalProperties = false;
    return out;
  }
  if (type === 'array') {
    const out: GrammarSchema = { type: 'array', items: grammarSchema(s.items, depth + 1) };
    if (typeof s.minItems === 'number') out.minItems = s.minItems;
    out.maxItems = typeof s.maxItems === 'number' ? Math.min(s.maxItems, 5) : 5;
    return out;
  }
  if (type === 'string') {
    if (typeof s.format === 'string' && FORMATS.has(s.format)) return { type: 'string', format: s.format };
    const out: GrammarSchema = { type: 'string' };
    if (typeof s.minLength === 'number') out.minLength = s.minLength;
    // A long free text is where a small model rambles (seen: a title repeating a date until the answer was cut).
    // 50 characters say what a task title needs and keep a whole call inside the embedded model's 128-token answer
    // even at worst: ≤ 2 tokens a character (digits one each, accented letters two) = 100, plus ~18 of JSON.
    out.maxLength = typeof s.maxLength === 'number' ? Math.min(s.maxLength, MAX_STRING) : MAX_STRING;
    return out;
  }
  if (typeof type === 'string' || Array.isArray(type)) return { type };
  return { type: ['string', 'number', 'boolean', 'null'] };
}
