import { newId, peerGraph, type Logger, type PeerConfig } from '@cuadra/shared';
import express from 'express';
import type { Connection } from 'mongoose';
import { siteLeads, sites, siteVersions, type SiteDoc, type SitePage } from './model.ts';
import { readCatalogItems } from '../../lib/catalog.ts';
import { catalogIdsOf, SITE_CSP, siteNotice, sitePage, type PageCatalog } from './render.ts';

/*
 * Published sites, reached through the gateway at `/s/<slug>/…` (forwarded here under `/public/`).
 * GET serves the published version's page; POST takes a submission of one of the page's forms:
 * the visitor's data and the consent they gave (or did not), with its evidence.
 */

const HEADERS = { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': SITE_CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY', 'permissions-policy': 'camera=(), microphone=(), geolocation=()' };

const EMAIL = /^[^\s@<>()[\]\\,;:"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** The published page at `path` of the site `slug`, or null. */
async function published(db: Connection, slug: string, path: string): Promise<{ site: SiteDoc; page: SitePage; pages: SitePage[] } | null> {
  const site = await sites(db).findOne({ slug }).lean();
  if (!site?.published_version) return null;
  const version = await siteVersions(db).findOne({ _id: `${site._id}.${site.published_version}`, workspace: site.workspace }).lean();
  const page = version?.pages.find((p) => p.path === path);
  return version && page ? { site, page, pages: version.pages } : null;
}

/**
 * The catalog items the page's lists name, read from finance as the site's workspace (the service's
 * read-only assertion); null when finance could not be read: the page is served without them rather
 * than not at all.
 */
async function catalogOf(peers: PeerConfig | undefined, log: Logger, workspace: string, page: SitePage): Promise<PageCatalog> {
  const ids = catalogIdsOf(page);
  if (ids.length === 0) return new Map();
  try {
    return await readCatalogItems(peerGraph('marketing', peers, workspace), ids);
  } catch (err) {
    log.warn({ err, workspace }, 'site page served without its catalog items: finance could not be read');
    return null;
  }
}

/** The site routes, mounted on the service's app. */
export function siteRoutes(db: Connection, log: Logger, now: () => Date, peers?: PeerConfig): express.Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 10 });
  const pathOf = (req: express.Request) => {
    const rest = (req.params as Record<string, string | string[] | undefined>).rest;
    const p = Array.isArray(rest) ? rest.join('/') : rest ?? '';
    return `/${p}`.replace(/\/+$/, '') || '/';
  };
  const send = (res: express.Response, status: number, html: string) => res.status(status).set({ ...HEADERS, 'cache-control': status === 200 ? 'public, max-age=60' : 'no-store' }).send(html);
  const notFound = (res: express.Response) => send(res, 404, siteNotice(null, 'Página no encontrada', 'Esta página no existe o el sitio no está publicado.'));

  router.get(['/public/s/:slug', '/public/s/:slug/{*rest}'], async (req, res) => {
    const found = await published(db, String(req.params.slug), pathOf(req));
    if (!found) return notFound(res);
    const catalog = await catalogOf(peers, log, found.site.workspace, found.page);
    // Without its catalog items the page is not kept anywhere: the next visitor's request reads finance again.
    if (catalog === null) return res.status(200).set({ ...HEADERS, 'cache-control': 'no-store' }).send(sitePage(found.site, found.page, found.pages, null));
    send(res, 200, sitePage(found.site, found.page, found.pages, catalog));
  });

  router.post(['/public/s/:slug', '/public/s/:slug/{*rest}'], form, async (req, res) => {
    const found = await published(db, String(req.params.slug), pathOf(req));
    if (!found) return notFound(res);
    const body = req.body as Record<string, string | undefined>;
    const block = found.page.blocks[Number(body.form)];
    if (!block || block.type !== 'form') return send(res, 400, siteNotice(found.site, 'Formulario no válido', 'Este formulario ya no está en la página; vuelve a cargarla.'));
    const field = (name: 'name' | 'phone' | 'message', max: number) => (block.fields.includes(name) ? (body[name] ?? '').trim().slice(0, max) || null : null);
    const email = (body.email ?? '').trim();
    if (!EMAIL.test(email) || email.length > 254) return send(res, 400, siteNotice(found.site, 'Revisa el correo', 'El correo electrónico no es válido; vuelve atrás y corrígelo.'));
    const at = now();
    const given = body.consent === 'yes';
    try {
      await siteLeads(db).create({
        _id: newId('lead'), workspace: found.site.workspace, site_id: found.site._id, path: found.page.path,
        name: field('name', 200), email: email.toLowerCase(), phone: field('phone', 40), message: field('message', 2000),
        consent: { given, text: block.consent_text, ip: String(req.header('x-cuadra-client-ip') ?? '').slice(0, 64) || null, user_agent: String(req.header('user-agent') ?? '').slice(0, 300) || null, at },
        ...(given ? { consent_pending: true as const } : {}),
        created_at: at,
      });
    } catch (err) {
      log.error({ err }, 'site form not kept');
      return send(res, 503, siteNotice(found.site, 'No pudimos recibir tus datos', 'Inténtalo de nuevo en unos minutos.'));
    }
    send(res, 200, siteNotice(found.site, 'Gracias', 'Recibimos tus datos; te escribiremos pronto.'));
  });
  return router;
}
