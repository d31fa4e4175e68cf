/** Escapes a person's text for use inside a regular expression (search filters). */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A page size from a caller: default 20, at least 1, at most 100. */
export function clampLimit(limit: number | undefined | null, fallback = 20): number {
  return Math.min(Math.max(Math.trunc(limit ?? fallback), 1), 100);
}
