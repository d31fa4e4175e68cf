import { createHash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted at every depth, no whitespace, `undefined` dropped.
 * The same value always gives the same text, so its digest can be compared and chained.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** Hex SHA-256 of a string. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Digest of a tool input: what idempotency and approvals compare, and what the ledger keeps instead of the input. */
export function inputDigest(input: unknown): string {
  return sha256(canonicalJson(input));
}
