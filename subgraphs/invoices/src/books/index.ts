/**
 * The books: the journal, the periods and their guard, the rollups (per-account ledger counters and
 * the receivables/payables counters the metrics read) and the due-date indexes — behind one API.
 * The books import no module; modules post through {@link postEntry} and {@link reverseEntry},
 * and declare the journal source kinds they write in their manifests (`journalSources`).
 * ARCHITECTURE.md, "The finance kernel", is the contract.
 */
export { creditNoteLines, postEntry, previewEntry, previewReversal, reverseEntry, settleJournalEntry, SETTLE_WAIT_MS, type BooksContext, type EntryHeading, type PostingPreview, type PostOptions, type RecordChange, type Reversal, type TakenBack } from './post.ts';
export { declareJournalSources, isJournalSource, REVERSAL_SOURCE } from './sources.ts';
export { assertPeriodOpen } from './periods.ts';
export { updateCounted } from './counted-write.ts';
export { balances, JOURNAL_LINES_VIEW_SCHEMA, journalEntries, tagsKey, tidyLines, type EntrySource, type JournalEntryDoc, type JournalLine } from './journal.ts';
