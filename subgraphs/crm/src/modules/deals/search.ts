import type { Connection } from 'mongoose';

/**
 * Search by index without `$text` (the store has none) and without scanning the workspace: each
 * record is listed, at write time, under the prefixes (3 to 12 characters) of the normalised words
 * of its searchable text — title, party, tags, text and select custom values — in posting lists
 * kept in `crm_search` (`_id` `<workspace>|<entity>|<prefix>`, `ids`). A search reads the list of
 * its longest word's prefix by `_id`, then the records by `_id`, and keeps those whose whole text
 * still contains the whole term (a list may hold a few ids more than it should: an id is added
 * before its record is written and removed after, so a crash can only leave an extra one).
 */
export const SEARCH = 'crm_search';

const MIN_PREFIX = 3;
const MAX_PREFIX = 12;

/** Lower case, accents taken off (NFD), anything but letters and digits a space. */
export function normaliseText(text: string): string {
  return text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

/** The search keys of some texts: every prefix of 3–12 characters of every word. */
export function searchKeys(texts: readonly (string | null | undefined)[]): string[] {
  const keys = new Set<string>();
  for (const word of normaliseText(texts.filter(Boolean).join(' ')).split(' ')) {
    for (let n = MIN_PREFIX; n <= Math.min(word.length, MAX_PREFIX); n++) keys.add(word.slice(0, n));
  }
  return [...keys];
}

/** The posting list a search term reads (its longest word's prefix), or null when no word has 3 characters. */
export function keyOfTerm(term: string): string | null {
  const words = normaliseText(term).split(' ').filter((w) => w.length >= MIN_PREFIX).sort((a, b) => b.length - a.length);
  return words[0] ? words[0].slice(0, MAX_PREFIX) : null;
}

function postingId(workspace: string, entity: string, key: string): string {
  return `${workspace}|${entity}|${key}`;
}

/** Lists a record under keys (before the record is written). */
export async function addToIndex(db: Connection, workspace: string, entity: string, id: string, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await db.collection(SEARCH).bulkWrite(keys.map((k) => ({ updateOne: { filter: { _id: postingId(workspace, entity, k) } as never, update: { $addToSet: { ids: id } }, upsert: true } })), { ordered: false });
}

/** Takes a record off keys (after the record no longer has them). */
export async function removeFromIndex(db: Connection, workspace: string, entity: string, id: string, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await db.collection(SEARCH).bulkWrite(keys.map((k) => ({ updateOne: { filter: { _id: postingId(workspace, entity, k) } as never, update: { $pull: { ids: id } } as never } })), { ordered: false });
}

/** The ids listed under one exact key (e.g. a deal's party, {@link partyKey}). */
export async function idsUnder(db: Connection, workspace: string, entity: string, key: string): Promise<string[]> {
  const doc = await db.collection<{ _id: string; ids: string[] }>(SEARCH).findOne({ _id: postingId(workspace, entity, key) });
  return doc?.ids ?? [];
}

/** The key a deal is also listed under for its party (not a word: searches never reach it), so a party's deals are read by `_id`. */
export function partyKey(partyId: string): string {
  return `~party:${partyId}`;
}

/** The ids listed under a term's key (a superset of the matches; null: the term has no indexable word). */
export async function candidates(db: Connection, workspace: string, entity: string, term: string): Promise<string[] | null> {
  const key = keyOfTerm(term);
  if (!key) return null;
  const doc = await db.collection<{ _id: string; ids: string[] }>(SEARCH).findOne({ _id: postingId(workspace, entity, key) });
  return doc?.ids ?? [];
}
