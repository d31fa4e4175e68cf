import { CuadraError, type PeerGraph, type ToolContext } from '@cuadra/shared';
import { readCatalogItems } from '../../lib/catalog.ts';
import { MAX_PAGES, MAX_PAGES_BYTES, sites, type Block, type SiteDoc, type SitePage } from './model.ts';

/*
 * The draft pages of a site, changed one page at a time (sites.pages.*). Every change is a
 * compare-and-set on the draft's revision: the new pages are written only if the revision is still
 * the one they were computed from, and the revision rises by one. A change that loses such a race
 * is computed again on the newer draft (it names one page: creating, changing, removing or
 * ordering it means the same on the newer pages), unless the caller named the revision it edited:
 * then the newer draft is theirs to read first (409 at /revision). Published versions are copies
 * (sites.publish), so a draft change never touches what visitors see.
 */

/** How many times a change is computed again on a newer draft before it is refused. */
const ATTEMPTS = 5;

/** JSON Schema of the revision a caller edited (optional in each sites.pages.* write). */
export const REVISION_SCHEMA = { type: 'integer', minimum: 0, description: 'The draft revision you edited (from sites.pages.list): if the draft changed since, nothing is done (409 at /revision). Absent: the change applies to the current draft.' } as const;

/** JSON Schema of one page as the sites.pages.* tools answer it. */
export const PAGE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['path', 'title', 'position', 'blocks'],
  properties: {
    path: { type: 'string' }, title: { type: 'string' },
    position: { type: 'integer', description: 'Its place in the site\'s navigation, from 1.' },
    blocks: { type: 'array', items: { type: 'object' } },
  },
} as const;

/** A page as the sites.pages.* tools answer it. */
export function pageView(page: SitePage, index: number) {
  return { path: page.path, title: page.title, position: index + 1, blocks: page.blocks };
}

/** The error of a page path that names no page of the site. */
export function noPage(path: string, field = '/path'): CuadraError {
  return new CuadraError('not_found', `The site has no page at ${path}.`, { field });
}

/** Refuses pages past what a site holds: {@link MAX_PAGES} pages, {@link MAX_PAGES_BYTES} bytes (at `field`). */
function checkSize(pages: readonly SitePage[], field: string): void {
  if (pages.length > MAX_PAGES) throw new CuadraError('conflict', `A site has at most ${MAX_PAGES} pages; delete one first.`, { field });
  if (Buffer.byteLength(JSON.stringify(pages)) > MAX_PAGES_BYTES) throw new CuadraError('invalid_input', `A site's pages hold at most ${MAX_PAGES_BYTES} bytes together; this change would pass that.`, { field });
}

/**
 * Refuses a list entry naming no item of the workspace's catalog (CONTRACT §10: 422 at the
 * reference). An archived item is one: the page leaves it out until it is active again.
 * `pages` are checked with `fieldOf(i)` the place of page `i` in the input.
 */
export async function checkCatalogReferences(graph: PeerGraph | undefined, pages: readonly { blocks: readonly Block[] }[], fieldOf: (index: number) => string): Promise<void> {
  const refs: { id: string; field: string }[] = [];
  pages.forEach((p, i) => p.blocks.forEach((b, j) => {
    if (b.type !== 'list') return;
    b.items.forEach((e, k) => { if ('item_id' in e) refs.push({ id: e.item_id, field: `${fieldOf(i)}/blocks/${j}/items/${k}/item_id` }); });
  }));
  if (refs.length === 0) return;
  const found = await readCatalogItems(graph, refs.map((r) => r.id));
  const missing = refs.find((r) => !found.has(r.id));
  if (missing) throw new CuadraError('invalid_input', `No item ${missing.id} exists in this workspace's catalog (items.list).`, { field: missing.field });
}

/** A draft after a change: the site as written and its pages. */
export interface DraftChange { site: SiteDoc; pages: SitePage[] }

/**
 * Applies `change` to the draft pages of site `siteId` and writes them on the revision read
 * (see above). `change` gets the current pages (a copy) and returns the new ones, or throws; pages
 * past a site's bounds are refused at `field`.
 */
export async function changeDraft(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, siteId: string, expected: number | undefined, change: (pages: SitePage[]) => SitePage[], field: string): Promise<DraftChange> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const site = await sites(ctx.db).findOne({ _id: siteId, workspace: ctx.workspace }).lean();
    if (!site) throw new CuadraError('not_found', `No site ${siteId} exists in this workspace.`, { field: '/site_id' });
    const revision = site.revision ?? 0;
    if (expected !== undefined && expected !== revision) {
      throw new CuadraError('conflict', `The draft is at revision ${revision}, not ${expected}: someone changed it meanwhile. Read it again (sites.pages.list) and redo your change.`, { field: '/revision' });
    }
    const pages = change(structuredClone(site.pages));
    checkSize(pages, field);
    // On the revision read (0 may be absent on a site made before revisions were counted).
    const filter = revision === 0 ? { _id: site._id, workspace: ctx.workspace, revision: { $in: [0, null] } } : { _id: site._id, workspace: ctx.workspace, revision };
    // A conditional updateOne: the primitive INFRA.md measured atomic under concurrency on both servers.
    const written = await sites(ctx.db).updateOne(filter, { $set: { pages, revision: revision + 1, updated_at: ctx.now } });
    if (written.matchedCount === 1) return { site: { ...site, pages, revision: revision + 1, updated_at: ctx.now }, pages };
    if (expected !== undefined) throw new CuadraError('conflict', 'Someone changed the draft at the same moment. Read it again (sites.pages.list) and redo your change.', { field: '/revision' });
  }
  throw new CuadraError('conflict', 'The draft kept changing while this change was made; try again.');
}
