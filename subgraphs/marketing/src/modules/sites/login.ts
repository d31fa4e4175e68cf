import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { modelOn, refusalBody, statusOf, type ErrorCode, type Logger } from '@cuadra/shared';
import express from 'express';
import { Schema, type Connection, type Model } from 'mongoose';
import { systemFromAddress, systemSmtp } from '../email_accounts/servers.ts';
import { sites } from './model.ts';

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

/** The login routes, mounted on the service's app (before the site pages, which would take any path). */
export function siteLoginRoutes(db: Connection, log: Logger, now: () => Date): express.Router {
  const router = express.Router();
  const body = [express.json({ limit: '2kb' }), express.urlencoded({ extended: false, limit: '2kb', parameterLimit: 5 })];
  const refuse = (res: express.Response, code: ErrorCode, message: string, field?: string) =>
    res.status(statusOf(code)).set('cache-control', 'no-store').json(refusalBody(code, message, field));
  const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

  router.post('/public/s/:slug/login/start', ...body, async (req, res) => {
    const email = text(req.body?.email).toLowerCase();
    if (!EMAIL.test(email) || email.length > 254) return refuse(res, 'invalid_input', 'Escribe un correo electrónico válido.', '/email');
    const site = await sites(db).findOne({ slug: String(req.params.slug) }).lean();
    if (!site?.published_version) return refuse(res, 'not_found', 'Este sitio no existe o no está publicado.');
    const at = now();
    const recent = await siteLoginCodes(db).countDocuments({ site_id: site._id, email, created_at: { $gt: new Date(at.getTime() - CODES_WINDOW_MS) } });
    if (recent >= MAX_CODES) return refuse(res, 'rate_limited', 'Pediste demasiados códigos; espera unos minutos y vuelve a intentarlo.');
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
      return refuse(res, 'unavailable', 'No pudimos enviar el código; inténtalo de nuevo en unos minutos.');
    }
    res.status(200).set('cache-control', 'no-store').json({ challenge, expires_in: CODE_TTL_SECONDS });
  });

  router.post('/public/s/:slug/login/verify', ...body, async (req, res) => {
    // Only the gateway's sign-in route sets this (its other forwards pass a fixed list of headers):
    // a path spelled otherwise that reached here through the plain page forward is not answered.
    if (req.header('x-cuadra-site-login') !== 'sign') return refuse(res, 'not_found', 'No such page.');
    const challenge = text(req.body?.challenge);
    const code = text(req.body?.code);
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(challenge)) return refuse(res, 'invalid_input', 'Pide un código nuevo.', '/challenge');
    if (!/^\d{6}$/.test(code)) return refuse(res, 'invalid_input', 'El código tiene seis dígitos.', '/code');
    // One try counted before the comparison, in the same step that checks the challenge is still good:
    // parallel guesses each spend a try, so no more than MAX_ATTEMPTS are ever compared.
    const doc = await siteLoginCodes(db).findOneAndUpdate(
      { _id: challenge, slug: String(req.params.slug), used_at: null, expires_at: { $gt: now() }, attempts: { $lt: MAX_ATTEMPTS } },
      { $inc: { attempts: 1 } },
      { new: true },
    ).lean();
    if (!doc) return refuse(res, 'invalid_input', 'Este código venció, ya se usó o tuvo demasiados intentos; pide uno nuevo.', '/challenge');
    const right = timingSafeEqual(Buffer.from(hashOf(doc.salt, code), 'hex'), Buffer.from(doc.code_hash, 'hex'));
    if (!right) return refuse(res, 'invalid_input', `El código no es correcto (te quedan ${MAX_ATTEMPTS - doc.attempts} intentos).`, '/code');
    // Used once: of two right answers at the same moment, one signs in.
    const used = await siteLoginCodes(db).updateOne({ _id: doc._id, used_at: null }, { $set: { used_at: now() } });
    if (used.modifiedCount !== 1) return refuse(res, 'invalid_input', 'Este código ya se usó; pide uno nuevo.', '/challenge');
    res.status(200).set('cache-control', 'no-store').json({ verified: { site_id: doc.site_id, slug: doc.slug, email: doc.email, subject: visitorSubject(doc.site_id, doc.email) } });
  });
  return router;
}
