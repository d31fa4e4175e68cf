import type { Logger } from '@cuadra/shared';
import express from 'express';
import type { Connection } from 'mongoose';
import { openLink } from './lib/links.ts';
import { PUBLIC_PAGE_CSP, publicPage } from './lib/page.ts';
import { suppress } from './modules/consents/model.ts';
import { recordConsent } from './modules/consents/record.ts';
import { CONFIRM_PURPOSE } from './modules/consents/tools/request.ts';
import { UNSUBSCRIBE_PURPOSE } from './modules/email_campaigns/content.ts';
import { emailRows, type RowStatus } from './modules/email_rows/model.ts';

/*
 * The marketing service's public endpoints, reached only through the gateway, which forwards
 * `/u/…` and `/c/…` here under `/public/` with the visitor's address in `x-cuadra-client-ip`:
 * - `/u/<token>`: RFC 8058 one-click unsubscribe. POST (`List-Unsubscribe=One-Click`, as mail
 *   clients send it, or the page's own button) unsubscribes at once, with no sign-in; GET shows a
 *   page with that button and changes nothing (link scanners follow GETs). Idempotent.
 * - `/c/<token>`: double opt-in confirmation, the same way (GET shows, POST confirms).
 * Tokens are signed (links.ts); an edited or made-up one is 404.
 */

function send(res: express.Response, status: number, html: string): void {
  res.status(status).set({ 'content-type': 'text/html; charset=utf-8', 'content-security-policy': PUBLIC_PAGE_CSP, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' }).send(html);
}

const notFound = () => publicPage({ title: 'Enlace no válido', paragraphs: ['Este enlace no existe o fue modificado.'] });

/** Evidence of an act by the person themself through a link: when, from where, with what browser. */
function evidenceOf(req: express.Request, source: 'unsubscribe' | 'double_opt_in', text: string, at: Date) {
  return { source, text, reference: null, recorded_by: 'public', ip: String(req.header('x-cuadra-client-ip') ?? '').slice(0, 64) || null, user_agent: String(req.header('user-agent') ?? '').slice(0, 300) || null, at };
}

/** Rows that an unsubscribe moves to `unsubscribed` (a queued one is cancelled by the sender's last check). */
const UNSUBSCRIBABLE: RowStatus[] = ['sent', 'delivered', 'replied', 'bounced_soft', 'sending', 'queued'];

/** The public routes, mounted on the service's app. */
export function publicRoutes(db: Connection, log: Logger, now: () => Date): express.Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 });

  router.get('/public/u/:token', async (req, res) => {
    const link = openLink(UNSUBSCRIBE_PURPOSE, req.params.token);
    const row = link ? await emailRows(db).findOne({ _id: link.r, workspace: link.w }).lean() : null;
    if (!row) return send(res, 404, notFound());
    if (row.status === 'unsubscribed') return send(res, 200, publicPage({ title: 'Suscripción cancelada', paragraphs: [`${row.address} ya no recibirá estos correos.`] }));
    send(res, 200, publicPage({ title: 'Cancelar la suscripción', paragraphs: [`¿Dejar de recibir correos comerciales en ${row.address}?`], button: { label: 'Cancelar la suscripción', fields: { 'List-Unsubscribe': 'One-Click' } } }));
  });

  router.post('/public/u/:token', form, async (req, res) => {
    const link = openLink(UNSUBSCRIBE_PURPOSE, req.params.token);
    const row = link ? await emailRows(db).findOne({ _id: link.r, workspace: link.w }).lean() : null;
    if (!row) return send(res, 404, notFound());
    try {
      const at = now();
      await suppress(db, { workspace: row.workspace, address: row.address, reason: 'unsubscribed', detail: 'One-click unsubscribe (RFC 8058).', row_id: row._id, at });
      await emailRows(db).updateOne({ _id: row._id, status: { $in: UNSUBSCRIBABLE } }, { $set: { status: 'unsubscribed', updated_at: at } });
      await recordConsent(db, { workspace: row.workspace, party_id: row.party_id, channel: 'email', status: 'withdrawn', from: ['granted', 'pending'], evidence: evidenceOf(req, 'unsubscribe', `Unsubscribed in one click from message ${row.message_id}.`, at) });
    } catch (err) {
      log.error({ err }, 'unsubscribe failed');
      return send(res, 503, publicPage({ title: 'No pudimos completar la solicitud', paragraphs: ['Inténtalo de nuevo en unos minutos.'] }));
    }
    send(res, 200, publicPage({ title: 'Suscripción cancelada', paragraphs: [`${row.address} ya no recibirá estos correos.`] }));
  });

  router.get('/public/c/:token', async (req, res) => {
    const link = openLink(CONFIRM_PURPOSE, req.params.token);
    if (!link) return send(res, 404, notFound());
    send(res, 200, publicPage({ title: 'Confirmar la suscripción', paragraphs: [`¿Quieres recibir correos comerciales en ${link.a}? Puedes cancelarlo cuando quieras con el enlace de cada correo.`], button: { label: 'Sí, quiero recibirlos' } }));
  });

  router.post('/public/c/:token', form, async (req, res) => {
    const link = openLink(CONFIRM_PURPOSE, req.params.token);
    if (!link) return send(res, 404, notFound());
    const at = now();
    const doc = await recordConsent(db, { workspace: link.w, party_id: link.p, channel: 'email', status: 'granted', address: link.a, from: ['pending'], evidence: evidenceOf(req, 'double_opt_in', `Confirmed by following the link sent to ${link.a}.`, at) });
    if (!doc) return send(res, 200, publicPage({ title: 'Sin cambios', paragraphs: ['Esta confirmación ya se registró o fue retirada.'] }));
    send(res, 200, publicPage({ title: 'Suscripción confirmada', paragraphs: [`Gracias: ${link.a} recibirá nuestros correos.`] }));
  });
  return router;
}
