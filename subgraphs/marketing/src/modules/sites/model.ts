import { addPositions, DATE_TIME_SCHEMA, modelOn, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** One block of a page: what a visitor sees, as data (never markup: every text is escaped when served). */
export type Block =
  | { type: 'heading'; text: string; level?: 1 | 2 | 3 }
  | { type: 'text'; text: string }
  | { type: 'image'; url: string; alt: string }
  /** Entries written on the page, or items of the workspace's catalog (finance's `items`, by id) shown with their current name and price with VAT. */
  | { type: 'list'; title?: string; items: ListEntry[] }
  | { type: 'form'; title?: string; fields: ('name' | 'email' | 'phone' | 'message')[]; consent_text: string; submit_label?: string }
  /** A booking type of the workspace (projects' booking_types, by slug): a link to its public booking page. */
  | { type: 'booking'; booking_type: string; title?: string; text?: string; submit_label?: string };

/** An entry of a list block: text of the page's own, or an item of the catalog. */
export type ListEntry = { title: string; text?: string } | { item_id: string };

/** A page of a site at a path (`/` the home page). */
export interface SitePage { path: string; title: string; blocks: Block[] }

/** A workspace's small website, served at `/s/<slug>/…` once published. */
export interface SiteDoc {
  _id: string;
  workspace: string;
  /** Unique across the deployment: the site's address. */
  slug: string;
  name: string;
  name_lc: string;
  /** The pages being edited (not what visitors see until published). */
  pages: SitePage[];
  /**
   * The draft's revision: every change of the pages (sites.update, sites.pages.*) raises it by one, on
   * the revision it read, so two editors at once never lose each other's change (absent: 0).
   */
  revision?: number;
  /** The published version visitors see (null: not published); every published version is kept. */
  published_version: number | null;
  versions: number;
  /** The crm pipeline (its key) a lead of this site opens a deal in (deals.create_from_lead); null: the workspace's default pipeline. */
  lead_pipeline: string | null;
  created_at: Date;
  updated_at: Date;
}

const siteSchema = new Schema<SiteDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, slug: String, name: String, name_lc: String,
  pages: { type: Schema.Types.Mixed, default: [] }, revision: { type: Number, default: 0 }, published_version: { type: Number, default: null }, versions: { type: Number, default: 0 },
  lead_pipeline: { type: String, default: null }, created_at: Date, updated_at: Date,
}, { versionKey: false });
siteSchema.index({ slug: 1 }, { unique: true });
addPositions(siteSchema);

/** The sites collection. */
export function sites(db: Connection): Model<SiteDoc> {
  return modelOn<SiteDoc>(db, 'Site', siteSchema, 'sites');
}

/** A published version of a site: its pages as they were published (`_id` = `<site>.<version>`). */
export interface SiteVersionDoc { _id: string; workspace: string; site_id: string; version: number; pages: SitePage[]; published_at: Date }

const versionSchema = new Schema<SiteVersionDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, site_id: String, version: Number, pages: { type: Schema.Types.Mixed, default: [] }, published_at: Date,
}, { versionKey: false });

/** The site_versions collection. */
export function siteVersions(db: Connection): Model<SiteVersionDoc> {
  return modelOn<SiteVersionDoc>(db, 'SiteVersion', versionSchema, 'site_versions');
}

/** A visitor's submission of a site's form, with the consent they gave (Ley 1581 de 2012: its evidence). */
export interface SiteLeadDoc {
  _id: string;
  workspace: string;
  site_id: string;
  path: string;
  name: string | null;
  email: string;
  phone: string | null;
  message: string | null;
  /** Whether the visitor ticked the consent box, and what it said, when, from where. */
  consent: { given: boolean; text: string; ip: string | null; user_agent: string | null; at: Date };
  /**
   * True while a consent the visitor gave waits for crm to make the lead's party: it is then recorded
   * on that party (consents, source `site_form`) by this service, and the flag goes (consent-of-leads.ts).
   */
  consent_pending?: true;
  /** The party the consent was recorded on. */
  consent_party_id?: string;
  created_at: Date;
}

const leadSchema = new Schema<SiteLeadDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, site_id: String, path: String,
  name: { type: String, default: null }, email: String, phone: { type: String, default: null }, message: { type: String, default: null },
  consent: { type: Schema.Types.Mixed }, consent_pending: Boolean, consent_party_id: String, created_at: Date,
}, { versionKey: false });
leadSchema.index({ workspace: 1, site_id: 1, created_at: -1 });
leadSchema.index({ consent_pending: 1, created_at: 1 });

/** The site_leads collection. */
export function siteLeads(db: Connection): Model<SiteLeadDoc> {
  return modelOn<SiteLeadDoc>(db, 'SiteLead', leadSchema, 'site_leads');
}

/** A site's address: lower-case letters, digits and hyphens. */
export const SLUG_SCHEMA = { type: 'string', pattern: '^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$', description: 'The site\'s address: /s/<slug>/ (unique in the deployment).' } as const;

const TEXT_LINE = { type: 'string', minLength: 1, maxLength: 200 } as const;

/**
 * JSON Schema of a block. Content is text, never markup: it is escaped when served, and links and
 * images are https only — a `javascript:` or `data:` address is refused at its field.
 */
export const BLOCK_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['type'],
  properties: {
    type: { enum: ['heading', 'text', 'image', 'list', 'form', 'booking'] },
    booking_type: { type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', minLength: 1, maxLength: 60, description: 'The slug of one of the workspace\'s booking types (booking_types.create): the block links to its public booking page /book/<workspace>/<slug>.' },
    text: { type: 'string', minLength: 1, maxLength: 5000 },
    level: { enum: [1, 2, 3] },
    url: { type: 'string', maxLength: 2000, pattern: '^https://[^\\s<>"\'`]+$', description: 'An https address (nothing else is served).' },
    alt: { type: 'string', minLength: 1, maxLength: 300, description: 'What the image shows, for people who cannot see it.' },
    items: {
      type: 'array', minItems: 1, maxItems: 50,
      description: 'The list\'s entries: {title, text?} written here, or {item_id} naming a product or service of the workspace\'s catalog (items.list): the published page shows its current name and price with VAT; an archived or deleted item is left out.',
      items: {
        type: 'object', additionalProperties: false,
        properties: { title: TEXT_LINE, text: { type: 'string', maxLength: 1000 }, item_id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'An item of the workspace\'s catalog (items.create).' } },
        if: { properties: { item_id: true }, required: ['item_id'] }, then: { properties: { title: false, text: false } }, else: { properties: { title: true }, required: ['title'] },
      },
    },
    title: TEXT_LINE,
    fields: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ['name', 'email', 'phone', 'message'] }, contains: { const: 'email' }, description: 'The form\'s fields; email is required.' },
    consent_text: { type: 'string', minLength: 10, maxLength: 1000, description: 'What the visitor authorises by ticking the box (Ley 1581 de 2012), e.g. "Autorizo el tratamiento de mis datos y recibir correos comerciales."' },
    submit_label: { type: 'string', minLength: 1, maxLength: 60 },
  },
  allOf: [
    { if: { properties: { type: { const: 'heading' } } }, then: { required: ['text'], properties: { text: true, url: false, alt: false, items: false, fields: false, consent_text: false, submit_label: false, title: false, booking_type: false } } },
    { if: { properties: { type: { const: 'text' } } }, then: { required: ['text'], properties: { text: true, level: false, url: false, alt: false, items: false, fields: false, consent_text: false, submit_label: false, title: false, booking_type: false } } },
    { if: { properties: { type: { const: 'image' } } }, then: { required: ['url', 'alt'], properties: { url: true, alt: true, text: false, level: false, items: false, fields: false, consent_text: false, submit_label: false, title: false, booking_type: false } } },
    { if: { properties: { type: { const: 'list' } } }, then: { required: ['items'], properties: { items: true, title: true, text: false, level: false, url: false, alt: false, fields: false, consent_text: false, submit_label: false, booking_type: false } } },
    { if: { properties: { type: { const: 'form' } } }, then: { required: ['fields', 'consent_text'], properties: { fields: true, consent_text: true, text: false, level: false, url: false, alt: false, items: false, booking_type: false } } },
    { if: { properties: { type: { const: 'booking' } } }, then: { required: ['booking_type'], properties: { booking_type: true, text: true, level: false, url: false, alt: false, items: false, fields: false, consent_text: false } } },
  ],
} as const;

/** A page's path within its site (its slug, unique in the site). */
export const PAGE_PATH_SCHEMA = { type: 'string', pattern: '^/(?:[a-z0-9-]{1,60}(?:/[a-z0-9-]{1,60}){0,4})?$', description: '/ for the home page, else /precios, /servicios/diseno… (unique in the site).' } as const;

/** A page's title. */
export const PAGE_TITLE_SCHEMA = TEXT_LINE;

/** A page's blocks, in order. */
export const BLOCKS_SCHEMA = { type: 'array', maxItems: 100, items: BLOCK_SCHEMA } as const;

/** JSON Schema of a page. */
export const PAGE_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['path', 'title', 'blocks'],
  properties: { path: PAGE_PATH_SCHEMA, title: PAGE_TITLE_SCHEMA, blocks: BLOCKS_SCHEMA },
} as const;

/** The most pages a site has. */
export const MAX_PAGES = 30;

/** The most a site's draft pages weigh together (their JSON, in bytes): one page at a time never grows a site past what one document and one published version hold. */
export const MAX_PAGES_BYTES = 1_000_000;

/** A crm pipeline's key (crm's PIPELINE_KEY rule), where a site's leads open their deals. */
export const LEAD_PIPELINE_SCHEMA = { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,39}$', description: 'The key of the crm pipeline each lead of this site opens a deal in (deals.create_from_lead); absent or null: the workspace\'s default pipeline.' } as const;

/** JSON Schema of {@link siteView}. */
export const SITE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['id', 'slug', 'name', 'pages', 'revision', 'published_version', 'versions', 'lead_pipeline', 'url', 'created_at', 'updated_at'],
  properties: {
    id: TEXT, slug: TEXT, name: TEXT, pages: { type: 'array', items: { type: 'object' } }, revision: { type: 'integer', description: 'The draft\'s revision (sites.pages.*).' }, published_version: { type: ['integer', 'null'] }, versions: { type: 'integer' },
    lead_pipeline: { type: ['string', 'null'] },
    url: { type: 'string', description: 'Where visitors see the published site.' }, created_at: DATE_TIME_SCHEMA, updated_at: DATE_TIME_SCHEMA,
  },
} as const;

/** The public shape of a site. */
export function siteView(s: SiteDoc, publicUrl: string) {
  return { id: s._id, slug: s.slug, name: s.name, pages: s.pages, revision: s.revision ?? 0, published_version: s.published_version, versions: s.versions, lead_pipeline: s.lead_pipeline ?? null, url: `${publicUrl}/s/${s.slug}/`, created_at: s.created_at.toISOString(), updated_at: s.updated_at.toISOString() };
}

/** One path per page: the same path twice is refused at the second. */
export function duplicatePath(pages: readonly SitePage[]): number {
  const seen = new Set<string>();
  for (const [i, p] of pages.entries()) {
    if (seen.has(p.path)) return i;
    seen.add(p.path);
  }
  return -1;
}
