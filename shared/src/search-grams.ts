import type { Connection } from 'mongoose';
import { declareDerivedCollection } from './governance/runs.ts';

/**
 * Substring search served by an index (issue 33): the store has no `$text`, and a search that
 * matched little walked the whole workspace (`parties.list {search}` for a name one party has:
 * 16 ms at 50 parties, 89 ms at 2,000). Each listed document is kept, when written, under the
 * trigrams (three consecutive characters) of its lower-cased searchable texts, in posting documents
 * of its series' positions: `search_grams`, `_id` `<series>|<workspace>|<gram>|<chunk>`, `p` the
 * positions of chunk `floor(pos / GRAM_CHUNK)` that contain the gram. A term of 3 characters or more
 * is a substring of a text only if each of its trigrams is one, so the positions found under a few
 * of its trigrams are a superset of the matches; the page then reads those documents by `pos_key`
 * and the list's own filter decides, as before. Positions are added before the document is written
 * and taken off after it no longer holds the gram, so a crash leaves at most an extra candidate.
 * A workspace's series is searched this way once its mark says every older document is indexed
 * (`search_grams_marks`: set by the first document of a series, or by the backfill at start).
 */
export const SEARCH_GRAMS = 'search_grams';
const MARKS = 'search_grams_marks';
// Bookkeeping derived from the records: its writes are no action's effect.
declareDerivedCollection(SEARCH_GRAMS);
declareDerivedCollection(MARKS);
/** Positions per posting document. */
export const GRAM_CHUNK = 1_024;
/** Chunks read per query while walking down. */
const CHUNKS_PER_READ = 32;
/** A term's trigrams read (spread over the term): more narrows the candidates, costs more keys. */
const GRAMS_PER_TERM = 3;

/** The trigrams of each text (lower-cased; a text shorter than 3 characters gives none). */
export function trigramsOf(texts: readonly (string | null | undefined)[]): string[] {
  const grams = new Set<string>();
  for (const text of texts) {
    if (!text) continue;
    const chars = [...text.toLowerCase()];
    for (let i = 0; i + 3 <= chars.length; i++) grams.add(chars.slice(i, i + 3).join(''));
  }
  return [...grams];
}

/** The searchable text of a document that keeps one lower-cased `search_lc` (the books' invoices, bills, payments). */
export function searchTextsOf(doc: { search_lc?: string | null }): string[] {
  return [doc.search_lc ?? ''];
}

const postingId = (series: string, workspace: string, gram: string, chunk: number) => `${series}|${workspace}|${gram}|${chunk}`;
const markId = (series: string, workspace: string) => `${series}|${workspace}`;

/** Keeps position `pos` under `grams` (before its document is written, or before it gains them). */
export async function addGrams(db: Connection, series: string, workspace: string, pos: number, grams: readonly string[]): Promise<void> {
  await addGramsOfMany(db, series, workspace, [{ pos, grams }]);
}

/**
 * Keeps many positions under their grams at once (the backfill, a bulk load): one upsert per
 * posting document touched, with every position it gains, instead of one per position and gram.
 */
export async function addGramsOfMany(db: Connection, series: string, workspace: string, items: readonly { pos: number; grams: readonly string[] }[]): Promise<void> {
  const postings = new Map<string, number[]>();
  for (const { pos, grams } of items) {
    const chunk = Math.floor(pos / GRAM_CHUNK);
    for (const g of grams) {
      const id = postingId(series, workspace, g, chunk);
      const list = postings.get(id);
      if (list) list.push(pos);
      else postings.set(id, [pos]);
    }
  }
  const writes = [...postings].map(([id, p]) => ({ updateOne: { filter: { _id: id } as never, update: { $addToSet: { p: p.length === 1 ? p[0] : { $each: p } } } as never, upsert: true } }));
  for (let i = 0; i < writes.length; i += 1_000) await db.collection(SEARCH_GRAMS).bulkWrite(writes.slice(i, i + 1_000), { ordered: false });
}

/** Takes position `pos` off `grams` (after its document no longer holds them). */
export async function removeGrams(db: Connection, series: string, workspace: string, pos: number, grams: readonly string[]): Promise<void> {
  if (grams.length === 0) return;
  const chunk = Math.floor(pos / GRAM_CHUNK);
  await db.collection(SEARCH_GRAMS).bulkWrite(grams.map((g) => ({ updateOne: { filter: { _id: postingId(series, workspace, g, chunk) } as never, update: { $pull: { p: pos } } as never } })), { ordered: false });
}

/** Marks a workspace's series as wholly indexed (its first document, or the backfill once done). */
export async function markIndexed(db: Connection, series: string, workspace: string): Promise<void> {
  await db.collection(MARKS).updateOne({ _id: markId(series, workspace) } as never, { $set: { done: true } }, { upsert: true });
}

/** Whether every document of the series in that workspace is indexed (else its searches walk positions). */
export async function isIndexed(db: Connection, series: string, workspace: string): Promise<boolean> {
  return (await db.collection(MARKS).findOne({ _id: markId(series, workspace) } as never))?.done === true;
}

/**
 * Candidate positions for `term` below `below`, newest first: at least `want` of them unless the
 * series' start was reached (`exhausted`). Null when the term has no trigram (under 3 characters):
 * the caller walks positions instead. Costs the chunks walked (one key per chunk and gram read),
 * never the documents that do not hold the term.
 */
export async function candidatePositions(db: Connection, series: string, workspace: string, term: string, below: number, want: number): Promise<{ positions: number[]; exhausted: boolean; lowest: number } | null> {
  const all = trigramsOf([term]);
  if (all.length === 0) return null;
  const grams = all.length <= GRAMS_PER_TERM ? all : Array.from({ length: GRAMS_PER_TERM }, (_, i) => all[Math.round((i * (all.length - 1)) / (GRAMS_PER_TERM - 1))]);
  const positions: number[] = [];
  let chunk = Math.floor((below - 1) / GRAM_CHUNK);
  while (chunk >= 0) {
    const chunks = Array.from({ length: Math.min(CHUNKS_PER_READ, chunk + 1) }, (_, i) => chunk - i);
    const docs = await db.collection<{ _id: string; p: number[] }>(SEARCH_GRAMS).find({ _id: { $in: chunks.flatMap((c) => grams.map((g) => postingId(series, workspace, g, c))) } }).toArray();
    const byId = new Map(docs.map((d) => [d._id, d.p]));
    for (const c of chunks) {
      const lists = grams.map((g) => byId.get(postingId(series, workspace, g, c)) ?? []);
      if (lists.some((l) => l.length === 0)) continue;
      const [first, ...rest] = lists.sort((a, b) => a.length - b.length);
      const others = rest.map((l) => new Set(l));
      positions.push(...first.filter((p) => p < below && others.every((s) => s.has(p))).sort((a, b) => b - a));
    }
    chunk -= chunks.length;
    if (positions.length >= want) return { positions, exhausted: chunk < 0, lowest: (chunk + 1) * GRAM_CHUNK };
  }
  return { positions, exhausted: true, lowest: 0 };
}
