import { CuadraError } from './errors.ts';
import type { JsonSchema } from './tool.ts';

/**
 * The input bounds of CONTRACT.md §9, checked before anything else reads a body: JSON nesting
 * depth ≤ 32, a string ≤ 64 KiB and an array ≤ 1,000 items unless the tool's schema declares a
 * larger `maxLength`/`maxItems`, and well-formed Unicode (a lone surrogate is refused, in keys too);
 * a property name never holds NUL (U+0000), which no MongoDB document can store.
 *
 * The depth bound is also what keeps the store alive: a stored document is at most a few levels
 * deeper than its input, far below the 100 levels MongoDB accepts (and the ~1,500 at which the
 * embedded mongo-java-server overflows its stack and closes for good).
 */
export const INPUT_BOUNDS = { depth: 32, stringLength: 64 * 1024, arrayItems: 1_000 } as const;

/**
 * The bounds of one tool: the contract's, raised for the properties whose schema declares a
 * larger `maxLength`/`maxItems` (by property name: `url` of an image block may hold a data: URI).
 * The raise applies to values under that property name only; ajv then holds each to its own limit.
 */
export interface InputBounds {
  depth: number;
  stringLength: number;
  arrayItems: number;
  /** Larger string limits by property name. */
  stringByKey?: ReadonlyMap<string, number>;
  /** Larger array limits by property name. */
  arrayByKey?: ReadonlyMap<string, number>;
}

/** The contract's bounds with the raises a schema declares (walked iteratively). */
export function boundsFor(schema: JsonSchema | undefined): InputBounds {
  const stringByKey = new Map<string, number>();
  const arrayByKey = new Map<string, number>();
  const stack: unknown[] = [schema];
  const seen = new Set<unknown>();
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null || seen.has(node)) continue;
    seen.add(node);
    const n = node as Record<string, unknown>;
    const properties = n.properties;
    if (typeof properties === 'object' && properties !== null) {
      for (const [name, sub] of Object.entries(properties as Record<string, Record<string, unknown>>)) {
        if (typeof sub !== 'object' || sub === null) continue;
        if (typeof sub.maxLength === 'number' && sub.maxLength > INPUT_BOUNDS.stringLength) stringByKey.set(name, Math.max(sub.maxLength, stringByKey.get(name) ?? 0));
        if (typeof sub.maxItems === 'number' && sub.maxItems > INPUT_BOUNDS.arrayItems) arrayByKey.set(name, Math.max(sub.maxItems, arrayByKey.get(name) ?? 0));
      }
    }
    for (const v of Object.values(n)) if (typeof v === 'object' && v !== null) stack.push(v);
  }
  return { ...INPUT_BOUNDS, ...(stringByKey.size ? { stringByKey } : {}), ...(arrayByKey.size ? { arrayByKey } : {}) };
}

/** A property name as a JSON Pointer token (RFC 6901: `~` → `~0`, `/` → `~1`). */
export const escapeToken = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Throws `invalid_input` with the JSON Pointer of the first value past the bounds. Iterative,
 * so an input nested 100,000 deep is refused, never a stack overflow.
 */
export function assertWithinBounds(input: unknown, bounds: InputBounds = INPUT_BOUNDS): void {
  // Depth counts containers: `{}` is depth 1, `{"a":{}}` depth 2.
  const stack: { value: unknown; path: string; depth: number; key: string | null }[] = [{ value: input, path: '', depth: 0, key: null }];
  while (stack.length > 0) {
    const { value, path, depth, key: ownKey } = stack.pop()!;
    if (typeof value === 'string') {
      const limit = (ownKey !== null ? bounds.stringByKey?.get(ownKey) : undefined) ?? bounds.stringLength;
      if (value.length > limit) {
        throw new CuadraError('invalid_input', `The argument ${path || 'body'} is longer than ${limit} characters.`, { field: path });
      }
      if (!value.isWellFormed()) throw new CuadraError('invalid_input', `The argument ${path || 'body'} is not well-formed Unicode (a lone surrogate).`, { field: path });
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth + 1 > bounds.depth) {
      throw new CuadraError('invalid_input', `The input is nested deeper than ${bounds.depth} levels at ${path || 'the body'}.`, { field: path });
    }
    if (Array.isArray(value)) {
      const limit = (ownKey !== null ? bounds.arrayByKey?.get(ownKey) : undefined) ?? bounds.arrayItems;
      if (value.length > limit) {
        throw new CuadraError('invalid_input', `The argument ${path || 'body'} has more than ${limit} items.`, { field: path });
      }
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${path}/${i}`, depth: depth + 1, key: null });
      continue;
    }
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i];
      const at = `${path}/${escapeToken(key)}`;
      if (!key.isWellFormed()) throw new CuadraError('invalid_input', 'A property name is not well-formed Unicode (a lone surrogate).', { field: at });
      // The pointer names the property itself (its parent did nothing wrong), however long: the body's size limit bounds it.
      if (key.length > bounds.stringLength) throw new CuadraError('invalid_input', `A property name is longer than ${bounds.stringLength} characters.`, { field: at });
      // A database stores property names as C strings: one with a NUL character cannot be stored (BSON refuses it).
      if (key.includes('\u0000')) throw new CuadraError('invalid_input', 'A property name contains a NUL character (U+0000).', { field: at });
      stack.push({ value: (value as Record<string, unknown>)[key], path: at, depth: depth + 1, key });
    }
  }
}

/**
 * The length in bytes of `JSON.stringify(value)` (UTF-8), measured without recursion: a surface
 * that received its input already parsed (MCP, GraphQL) checks the tool's size limit with it before
 * anything walks the input recursively (an input 5,000 levels deep overflows `JSON.stringify`'s stack;
 * the size check must answer 413, or let the bounds answer 422 at their pointer). Stops counting
 * once past `stopAfter` (the limit being checked): an oversized input is not walked to its end.
 */
export function jsonByteLength(value: unknown, stopAfter = Number.POSITIVE_INFINITY): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= stopAfter) {
    const v = stack.pop();
    if (v === null) total += 4;
    else if (typeof v === 'string') total += Buffer.byteLength(JSON.stringify(v));
    else if (typeof v === 'number' || typeof v === 'boolean') total += String(JSON.stringify(v)).length;
    else if (Array.isArray(v)) {
      // `[`, `]` and the commas; undefined and functions stand as null in an array.
      total += 1 + Math.max(1, v.length);
      for (const item of v) stack.push(item === undefined || typeof item === 'function' ? null : item);
    } else if (typeof v === 'object') {
      let n = 0;
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        if (x === undefined || typeof x === 'function') continue;
        // `"key":` then the value.
        total += Buffer.byteLength(JSON.stringify(k)) + 1;
        stack.push(x);
        n++;
      }
      total += 1 + Math.max(1, n);
    }
  }
  return total;
}
