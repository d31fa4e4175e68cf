/**
 * The journal source kinds the books accept. The list is open: each module declares in its
 * manifest the kinds it posts (`journalSources`), the subgraph declares them here when it starts
 * (server.ts), and {@link postEntry} refuses a kind nobody declared — so a new feed (a stock
 * movement, a depreciation run) adds its kind in its own folder and edits nothing in the books.
 */

/** The kind of every reversing entry ({@link reverseEntry}): the books' own, never a module's. */
export const REVERSAL_SOURCE = 'reversal';

const declared = new Set<string>([REVERSAL_SOURCE]);

/** Declares the journal source kinds of a subgraph's modules (once, when it starts; declaring again adds nothing). */
export function declareJournalSources(kinds: Iterable<string>): void {
  for (const kind of kinds) {
    if (!/^[a-z][a-z0-9_]*$/.test(kind)) throw new Error(`The journal source kind "${kind}" is not a lower-case word.`);
    declared.add(kind);
  }
}

/** Whether a module declared the kind (or it is the books' own `reversal`). */
export function isJournalSource(kind: string): boolean {
  return declared.has(kind);
}
