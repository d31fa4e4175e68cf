import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { modelOn, refusalBody, statusOf, type ErrorCode, type Logger } from '@cuadra/shared';
import express from 'express';
import { Schema, type Connection, type Model } from 'mongoose';
import { systemFromAddress, systemSmtp } from '../email_accounts/servers.ts';
import { escapeHtml } from '../../lib/page.ts';
import { sites } from './model.ts';
import { SITE_CSP, siteNotice, siteShell } from './render.ts';

/*
 * `sites.login`, the half the marketing service does: a visitor of a published site proves they hold
 * an address by a six-digit code e-mailed through the deployment's SMTP server. The service keeps
 * only an HMAC of the code (under a salt of the challenge's own), compares in constant time, allows
 * five tries per code, five codes per address and site per quarter hour, and ten minutes per code.
 * When a code is right it answers the gateway — never a visitor: the gateway forwards these posts and
 * keeps this answer — with who was verified; the gateway signs the ID token with its one token key
 * (gateway/src/marketing-public.ts). Reached at `/s/<slug>/login/start` and `/s/<slug>/login/verify`.
 */

/** How long a code is good for. */
export const CODE_TTL_SECONDS = 600;
/** Wrong tries a code survives; the next one uses the challenge up. */
export const MAX_ATTEMPTS = 5;
/** Codes an address may ask for at one site per {@link CODES_WINDOW_MS}. */
const MAX_CODES = 5;
const CODES_WINDOW_MS = 15 * 60_000;

const EMAIL = /^[^\s@<>()[\]\\,;:"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** A code sent to a visitor of a site, kept as its HMAC until used, used up or expired. */
interface LoginCodeDoc {
  /** The challenge the visitor holds (128 random bits). */
  _id: string;
  workspace: string;
  site_id: string;
  slug: string;
  email: string;
  salt: string;
  /** HMAC-SHA256(salt, code), hex: the code itself is never stored. */
  code_hash: string;
  attempts: number;
  expires_at: Date;
  used_at: Date | null;
  created_at: Date;
}

const loginCodeSchema = new Schema<LoginCodeDoc>({
  _id: { type: String, required: true }, workspace: String, site_id: String, slug: String, email: String, salt: String, code_hash: String,
  attempts: { type: Number, default: 0 }, expires_at: Date, used_at: { type: Date, default: null }, created_at: Date,
}, { versionKey: false });
loginCodeSchema.index({ site_id: 1, email: 1, created_at: -1 });

/** The site_login_codes collection. */
export function siteLoginCodes(db: Connection): Model<LoginCodeDoc> {
  return modelOn<LoginCodeDoc>(db, 'SiteLoginCode', loginCodeSchema, 'site_login_codes');
}

const hashOf = (salt: string, code: string) => createHmac('sha256', salt).update(code).digest('hex');

/** The visitor's subject at a site: stable for the address at that site, and not the address itself. */
export function visitorSubject(siteId: string, email: string): string {
  return `v_${createHash('sha256').update(`${siteId}\n${email}`).digest('base64url').slice(0, 22)}`;
}

/** A refusal of a sign-in step: the contract's code, a sentence for the visitor, the field it is about. */
interface StepRefusal { refused: { code: ErrorCode; message: string; field?: string } }
const refusal = (code: ErrorCode, message: string, field?: string): StepRefusal => ({ refused: { code, message, field } });

/** The visitor's address verified at a site, answered to the gateway only (it signs the ID token). */
interface Verified { site_id: string; slug: string; email: string; subject: string }

/** The HTML pages' headers: the sites' strict CSP, never cached (a challenge is in the page). */
const PAGE_HEADERS = { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': SITE_CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY', 'cache-control': 'no-store' };

/** The login routes, mounted on the service's app (before the site pages, which would take any path). */
export function siteLoginRoutes(db: Connection, log: Logger, now: () => Date): express.Router {
  const router = express.Router();
  const body = [express.json({ limit: '2kb' }), express.urlencoded({ extended: false, limit: '2kb', parameterLimit: 5 })];
  const refuse = (res: express.Response, r: StepRefusal) =>
    res.status(statusOf(r.refused.code)).set('cache-control', 'no-store').json(refusalBody(r.refused.code, r.refused.message, r.refused.field));
  const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
  const publishedSite = async (slug: string) => {
    const site = await sites(db).findOne({ slug }).lean();
    return site?.published_version ? site : null;
  };

  /** Step one: a code for `email` at the site, e-mailed; answers the challenge the visitor holds. */
  const start = async (slug: string, rawEmail: unknown): Promise<{ challenge: string } | StepRefusal> => {
    const email = text(rawEmail).toLowerCase();
    if (!EMAIL.test(email) || email.length > 254) return refusal('invalid_input', 'Escribe un correo electrónico válido.', '/email');
    const site = await publishedSite(slug);
    if (!site) return refusal('not_found', 'Este sitio no existe o no está publicado.');
    const at = now();
    const recent = await siteLoginCodes(db).countDocuments({ site_id: site._id, email, created_at: { $gt: new Date(at.getTime() - CODES_WINDOW_MS) } });
    if (recent >= MAX_CODES) return refusal('rate_limited', 'Pediste demasiados códigos; espera unos minutos y vuelve a intentarlo.');
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const salt = randomBytes(16).toString('hex');
    const challenge = randomBytes(16).toString('base64url');
    await siteLoginCodes(db).create({
      _id: challenge, workspace: site.workspace, site_id: site._id, slug: site.slug, email, salt, code_hash: hashOf(salt, code),
      attempts: 0, expires_at: new Date(at.getTime() + CODE_TTL_SECONDS * 1000), used_at: null, created_at: at,
    });
    try {
      await systemSmtp().sendMail({
        from: { name: site.name, address: systemFromAddress() },
        to: email,
        subject: `Tu código para entrar a ${site.name}`,
        text: `Tu código para entrar a ${site.name} es:\n\n    ${code}\n\nVence en ${CODE_TTL_SECONDS / 60} minutos. Si no lo pediste, ignora este correo.\n`,
      });
    } catch (err) {
      // Not sent: the challenge can never be answered, so it is removed rather than left to count against the visitor.
      log.error({ err }, 'site sign-in code not sent');
      await siteLoginCodes(db).deleteOne({ _id: challenge }).catch(() => undefined);
      return refusal('unavailable', 'No pudimos enviar el código; inténtalo de nuevo en unos minutos.');
    }
    return { challenge };
  };

  /** Step two: the code checked against the challenge (tries counted first, used once). */
  const verify = async (slug: string, rawChallenge: unknown, rawCode: unknown): Promise<{ verified: Verified } | StepRefusal> => {
    const challenge = text(rawChallenge);
    const code = text(rawCode);
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(challenge)) return refusal('invalid_input', 'Pide un código nuevo.', '/challenge');
    if (!/^\d{6}$/.test(code)) return refusal('invalid_input', 'El código tiene seis dígitos.', '/code');
    // One try counted before the comparison, in the same step that checks the challenge is still good:
    // parallel guesses each spend a try, so no more than MAX_ATTEMPTS are ever compared.
    const doc = await siteLoginCodes(db).findOneAndUpdate(
      { _id: challenge, slug, used_at: null, expires_at: { $gt: now() }, attempts: { $lt: MAX_ATTEMPTS } },
      { $inc: { attempts: 1 } },
      { new: true },
    ).lean();
    if (!doc) return refusal('invalid_input', 'Este código venció, ya se usó o tuvo demasiados intentos; pide uno nuevo.', '/challenge');
    const right = timingSafeEqual(Buffer.from(hashOf(doc.salt, code), 'hex'), Buffer.from(doc.code_hash, 'hex'));
    if (!right) return refusal('invalid_input', `El código no es correcto (te quedan ${MAX_ATTEMPTS - doc.attempts} intentos).`, '/code');
    // Used once: of two right answers at the same moment, one signs in.
    const used = await siteLoginCodes(db).updateOne({ _id: doc._id, used_at: null }, { $set: { used_at: now() } });
    if (used.modifiedCount !== 1) return refusal('invalid_input', 'Este código ya se usó; pide uno nuevo.', '/challenge');
    return { verified: { site_id: doc.site_id, slug: doc.slug, email: doc.email, subject: visitorSubject(doc.site_id, doc.email) } };
  };

  // Only the gateway's sign-in routes set this (its other forwards pass a fixed list of headers):
  // a path spelled otherwise that reached here through the plain page forward is not answered.
  const fromSigner = (req: express.Request) => req.header('x-cuadra-site-login') === 'sign';

  // ——— JSON, for a site's own script or app ———
  router.post('/public/s/:slug/login/start', ...body, async (req, res) => {
    const out = await start(String(req.params.slug), req.body?.email);
    if ('refused' in out) return refuse(res, out);
    res.status(200).set('cache-control', 'no-store').json({ challenge: out.challenge, expires_in: CODE_TTL_SECONDS });
  });
  router.post('/public/s/:slug/login/verify', ...body, async (req, res) => {
    if (!fromSigner(req)) return refuse(res, refusal('not_found', 'No such page.'));
    const out = await verify(String(req.params.slug), req.body?.challenge, req.body?.code);
    if ('refused' in out) return refuse(res, out);
    res.status(200).set('cache-control', 'no-store').json(out);
  });

  // ——— HTML, for a visitor's browser: plain forms, no script ———
  const page = (res: express.Response, status: number, site: { name: string; slug: string }, title: string, inner: string) =>
    res.status(status).set(PAGE_HEADERS).send(siteShell(site, title, inner));
  const error = (message: string | undefined) => (message ? `<p role="alert" id="error">${escapeHtml(message)}</p>` : '');
  const emailForm = (site: { slug: string }, message?: string, value = '') => `${error(message)}<p>Te enviaremos un código de seis dígitos a tu correo.</p>`
    + `<form method="post" action="/s/${escapeHtml(site.slug)}/login"><label for="email">Correo electrónico</label>`
    + `<input id="email" name="email" type="email" required maxlength="254" autocomplete="email" value="${escapeHtml(value)}"${message ? ' aria-describedby="error" aria-invalid="true"' : ''}>`
    + '<button type="submit">Enviarme un código</button></form>';
  const codeForm = (site: { slug: string }, challenge: string, email: string, message?: string) => `${error(message)}<p>Escribe el código que enviamos a <strong>${escapeHtml(email)}</strong>. Vence en ${CODE_TTL_SECONDS / 60} minutos.</p>`
    + `<form method="post" action="/s/${escapeHtml(site.slug)}/login/code"><input type="hidden" name="challenge" value="${escapeHtml(challenge)}">`
    + `<label for="code">Código</label><input id="code" name="code" type="text" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" required autocomplete="one-time-code"${message ? ' aria-describedby="error" aria-invalid="true"' : ''}>`
    + '<button type="submit">Entrar</button></form>'
    + `<p><a href="/s/${escapeHtml(site.slug)}/login">Pedir otro código</a></p>`;
  const rateWait = (r: StepRefusal) => (r.refused.code === 'rate_limited' ? 429 : statusOf(r.refused.code));

  router.get('/public/s/:slug/login', async (req, res) => {
    const site = await publishedSite(String(req.params.slug));
    if (!site) return res.status(404).set(PAGE_HEADERS).send(siteNotice(null, 'Página no encontrada', 'Este sitio no existe o no está publicado.'));
    // Set by the gateway only, after checking the visitor's ID token for this site (never taken from the visitor).
    const visitor = text(req.header('x-cuadra-site-visitor'));
    if (visitor) {
      return page(res, 200, site, 'Entraste', `<p id="signed-in">Entraste como <strong>${escapeHtml(visitor)}</strong>.</p>`
        + `<form method="post" action="/s/${escapeHtml(site.slug)}/login/out"><button type="submit">Salir</button></form><p><a href="/s/${escapeHtml(site.slug)}/">Volver al sitio</a></p>`);
    }
    page(res, 200, site, 'Entrar', emailForm(site));
  });
  router.post('/public/s/:slug/login', ...body, async (req, res) => {
    const site = await publishedSite(String(req.params.slug));
    if (!site) return res.status(404).set(PAGE_HEADERS).send(siteNotice(null, 'Página no encontrada', 'Este sitio no existe o no está publicado.'));
    const out = await start(site.slug, req.body?.email);
    if ('refused' in out) return page(res, rateWait(out), site, 'Entrar', emailForm(site, out.refused.message, text(req.body?.email).slice(0, 254)));
    page(res, 200, site, 'Escribe tu código', codeForm(site, out.challenge, text(req.body?.email).toLowerCase()));
  });
  /**
   * The code, from the form. Right: the verified visitor as JSON, to the gateway only (it signs the
   * ID token, keeps it in the site's cookie and sends the visitor on). Wrong: the form again, with
   * the reason, while the challenge can still be answered; else the e-mail form.
   */
  router.post('/public/s/:slug/login/code', ...body, async (req, res) => {
    if (!fromSigner(req)) return refuse(res, refusal('not_found', 'No such page.'));
    const site = await publishedSite(String(req.params.slug));
    if (!site) return res.status(404).set(PAGE_HEADERS).send(siteNotice(null, 'Página no encontrada', 'Este sitio no existe o no está publicado.'));
    const out = await verify(site.slug, req.body?.challenge, req.body?.code);
    if (!('refused' in out)) return res.status(200).set('cache-control', 'no-store').json(out);
    if (out.refused.field === '/code') {
      const challenge = await siteLoginCodes(db).findOne({ _id: text(req.body?.challenge), slug: site.slug }, { email: 1 }).lean();
      if (challenge) return page(res, 400, site, 'Escribe tu código', codeForm(site, challenge._id, challenge.email, out.refused.message));
    }
    page(res, 400, site, 'Entrar', emailForm(site, out.refused.message));
  });
  return router;
}
