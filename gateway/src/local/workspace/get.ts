import { CuadraError, defineTool } from '@cuadra/shared';
import { gatewayServices } from '../services.ts';

const TEXT = { type: 'string' } as const;

/** Booking types read per answer: a workspace has a handful; the page lists the active ones. */
const BOOKING_TYPES_READ = 100;

/**
 * The caller's workspace as the world addresses it (issue 35): its public slug and the public
 * booking page of each active booking type, `<public URL>/book/<slug>/<type slug>`, which anyone
 * can book on without an account. The gateway holds workspaces and slugs; the booking types are
 * read from the projects service through the pipeline as the caller (a caller who may not read
 * booking types gets `booking_pages: null`, not an error).
 */
export const get = defineTool({
  name: 'workspace.get',
  description: 'The caller\'s workspace: id, name, country, its public slug, the base address of its public booking pages, and each active booking type\'s page (booking_pages: name, type id and slug, url), where visitors book without an account. booking_pages is null when the caller may not read booking types.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, properties: {} },
  output: {
    type: 'object', additionalProperties: false, required: ['workspace'],
    properties: {
      workspace: {
        type: 'object', additionalProperties: false, required: ['id', 'name', 'country', 'slug', 'booking_page_base', 'booking_pages'],
        properties: {
          id: TEXT, name: TEXT, country: TEXT,
          slug: { type: ['string', 'null'], description: 'The workspace\'s public name in addresses (null only in the moment before the start-up backfill gives an older workspace one).' },
          booking_page_base: { type: ['string', 'null'], description: 'The address its booking pages start with: <public URL>/book/<slug>/.' },
          booking_pages: {
            anyOf: [{ type: 'null' }, {
              type: 'array',
              items: {
                type: 'object', additionalProperties: false, required: ['type_id', 'name', 'slug', 'url'],
                properties: { type_id: TEXT, name: TEXT, slug: TEXT, url: TEXT },
              },
            }],
          },
        },
      },
    },
  },
  async handler(_input, ctx) {
    const services = gatewayServices(ctx);
    const w = await services.identity.workspace(ctx.workspace);
    if (!w) throw new CuadraError('not_found', 'This workspace no longer exists.');
    const slug = w.slug ?? null;
    const base = slug ? `${(services.publicUrl ?? '').replace(/\/+$/, '')}/book/${slug}/` : null;
    let pages: { type_id: string; name: string; slug: string; url: string }[] | null = null;
    if (services.invokeRead && base) {
      try {
        const out = await services.invokeRead(ctx.principal, 'booking_types.list', { status: 'active', limit: BOOKING_TYPES_READ }) as { rows: { id: string; name: string; slug: string }[] };
        pages = out.rows.map((t) => ({ type_id: t.id, name: t.name, slug: t.slug, url: `${base}${t.slug}` }));
      } catch (err) {
        // Not the caller's to read (role, key patterns, scopes): the pages are left out, the rest answered.
        if (!(err instanceof CuadraError) || !['policy_denied', 'insufficient_scope'].includes(err.code)) throw err;
      }
    }
    return { workspace: { id: w._id, name: w.name, country: w.country, slug, booking_page_base: base, booking_pages: pages } };
  },
});
