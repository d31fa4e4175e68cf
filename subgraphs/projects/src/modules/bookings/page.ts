import { createHash } from 'node:crypto';
import { addDays, CuadraError, type Logger } from '@cuadra/shared';
import express from 'express';
import { DateTime } from 'luxon';
import type { Connection } from 'mongoose';
import { bookingTypes, type BookingTypeDoc } from '../booking_types/model.ts';
import { askedRange, slotsOf, type Slot } from './availability.ts';
import { bookAndInvite } from './book.ts';

/*
 * The public booking page, reached only through the gateway (`/book/<workspace slug>/<type slug>`,
 * forwarded here as `/public/book/<workspace id>/<type slug>` with the visitor's address): plain
 * HTML forms in Spanish that work without JavaScript — a GET form chooses the week and the zone, a
 * POST form books one of the week's slots (radio buttons) — and nothing on it runs script.
 */

const STYLE = 'body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1a1a1a;background:#fafafa}main{max-width:44rem;margin:0 auto;padding:1.5rem}'
  + 'fieldset{border:1px solid #bbb;border-radius:.4rem;margin:0 0 1rem;padding:.5rem 1rem}legend{font-weight:600;padding:0 .3rem}'
  + '.slots label{display:inline-block;margin:.2rem .6rem .2rem 0;padding:.2rem .5rem;border:1px solid #767676;border-radius:.3rem;background:#fff}'
  + 'label.campo{display:block;margin:.6rem 0 .2rem;font-weight:600}input[type=text],input[type=email],input[type=date],select,textarea{font:inherit;padding:.3rem;border:1px solid #767676;border-radius:.3rem;width:100%;max-width:24rem;box-sizing:border-box}'
  + 'button{font:inherit;margin-top:1rem;padding:.4rem 1rem;border-radius:.3rem;border:1px solid #0b4f8a;background:#0b4f8a;color:#fff}'
  + '.error{border:1px solid #a4000f;color:#a4000f;background:#fff0f0;padding:.5rem 1rem;border-radius:.3rem}nav a{margin-right:1rem;color:#0b4f8a}';
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');
/** Nothing loads and nothing runs; the one style block is allowed by its hash; forms post back here only. */
export const BOOKING_PAGE_CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/** Zones a visitor can choose (the type's own is always offered). */
const ZONES = ['America/Bogota', 'America/Mexico_City', 'America/Lima', 'America/Santiago', 'America/Argentina/Buenos_Aires', 'America/Caracas', 'America/New_York', 'America/Los_Angeles', 'Europe/Madrid', 'Europe/London', 'UTC'];

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function send(res: express.Response, status: number, title: string, body: string): void {
  res.status(status).set({ 'content-type': 'text/html; charset=utf-8', 'content-security-policy': BOOKING_PAGE_CSP, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY' })
    .send(`<!doctype html>\n<html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`);
}

const longDate = (date: string, zone: string) => DateTime.fromISO(date, { zone }).setLocale('es').toFormat("cccc d 'de' LLLL 'de' yyyy");
const whenText = (at: Date, zone: string) => `${DateTime.fromJSDate(at, { zone }).setLocale('es').toFormat("cccc d 'de' LLLL 'de' yyyy, HH:mm")} (${zone})`;

/** What the visitor asked for: a zone the zone database knows (else the type's) and a week's first date (else today there). */
function asked(type: BookingTypeDoc, q: Record<string, unknown>, now: Date): { zone: string; date: string } {
  const z = typeof q.zona === 'string' && q.zona.length <= 64 && DateTime.now().setZone(q.zona).isValid ? q.zona : type.time_zone;
  const today = DateTime.fromJSDate(now, { zone: z }).toISODate()!;
  const d = typeof q.fecha === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(q.fecha) && DateTime.fromISO(q.fecha).isValid && q.fecha >= today ? q.fecha : today;
  return { zone: z, date: d };
}

interface FormState { error?: string; nombre?: string; correo?: string; inicio?: string; answers?: Record<string, string> }

async function pageFor(db: Connection, type: BookingTypeDoc, zone: string, date: string, now: Date, path: string, state: FormState = {}): Promise<string> {
  const range = askedRange(date, addDays(date, 6), zone);
  const slots = await slotsOf(db, type, range.from, range.to, now, zone);
  const byDay = new Map<string, Slot[]>();
  for (const s of slots) byDay.set(s.date, [...(byDay.get(s.date) ?? []), s]);
  const zones = [...new Set([type.time_zone, ...ZONES, zone])];
  const minutes = `${type.duration_min} minutos`;
  const where = [type.location, type.video_url ? 'por videollamada' : null].filter(Boolean).join(' · ');
  const parts: string[] = [
    `<h1>${esc(type.name)}</h1>`,
    `<p>Duración: ${minutes}${where ? ` · ${esc(where)}` : ''}${type.price ? ` · Precio: ${esc(new Intl.NumberFormat('es-CO', { style: 'currency', currency: type.price.currency, maximumFractionDigits: 0 }).format(type.price.amount))}` : ''}</p>`,
    type.description ? `<p>${esc(type.description)}</p>` : '',
    `<form method="get" action="${esc(path)}" aria-label="Semana y zona horaria"><label class="campo" for="fecha">Semana desde</label><input type="date" id="fecha" name="fecha" value="${esc(date)}">`
      + `<label class="campo" for="zona">Tu zona horaria</label><select id="zona" name="zona">${zones.map((z) => `<option value="${esc(z)}"${z === zone ? ' selected' : ''}>${esc(z)}</option>`).join('')}</select>`
      + `<div><button type="submit">Ver horarios</button></div></form>`,
    `<nav aria-label="Semanas">${date > DateTime.fromJSDate(now, { zone }).toISODate()! ? `<a href="${esc(path)}?fecha=${addDays(date, -7)}&amp;zona=${encodeURIComponent(zone)}">Semana anterior</a>` : ''}<a href="${esc(path)}?fecha=${addDays(date, 7)}&amp;zona=${encodeURIComponent(zone)}">Semana siguiente</a></nav>`,
    `<h2>Horarios disponibles (${esc(zone)})</h2>`,
  ];
  if (state.error) parts.push(`<p class="error" role="alert">${esc(state.error)}</p>`);
  if (slots.length === 0) {
    parts.push('<p>No hay horarios disponibles esta semana. Prueba con la semana siguiente.</p>');
    return parts.join('');
  }
  const form: string[] = [`<form method="post" action="${esc(path)}"><input type="hidden" name="zona" value="${esc(zone)}"><input type="hidden" name="fecha" value="${esc(date)}">`];
  for (const [day, list] of byDay) {
    form.push(`<fieldset class="slots"><legend>${esc(longDate(day, zone))}</legend>${list.map((s) => {
      const id = `s-${s.start.replace(/[^0-9]/g, '')}`;
      return `<label for="${id}"><input type="radio" id="${id}" name="inicio" value="${esc(s.start)}" required${state.inicio === s.start ? ' checked' : ''}> ${esc(s.time)}</label>`;
    }).join('')}</fieldset>`);
  }
  form.push('<fieldset><legend>Tus datos</legend>');
  form.push(`<label class="campo" for="nombre">Nombre</label><input type="text" id="nombre" name="nombre" required maxlength="200" autocomplete="name" value="${esc(state.nombre ?? '')}">`);
  form.push(`<label class="campo" for="correo">Correo electrónico</label><input type="email" id="correo" name="correo" required maxlength="254" autocomplete="email" value="${esc(state.correo ?? '')}">`);
  for (const q of type.questions) {
    form.push(`<label class="campo" for="p-${esc(q.key)}">${esc(q.label)}${q.required ? '' : ' (opcional)'}</label><textarea id="p-${esc(q.key)}" name="p_${esc(q.key)}" rows="2" maxlength="2000"${q.required ? ' required' : ''}>${esc(state.answers?.[q.key] ?? '')}</textarea>`);
  }
  form.push(`</fieldset><button type="submit">Reservar</button></form>`);
  parts.push(form.join(''));
  return parts.join('');
}

/** The Spanish sentence for a refusal of the form (the tools' own messages are for callers of the API). */
function refusalText(err: CuadraError, type: BookingTypeDoc): string {
  if (err.code === 'conflict') return 'Ese horario ya no está disponible: alguien lo reservó hace un momento. Elige otro.';
  const field = err.field ?? '';
  if (field === '/start') return 'Elige uno de los horarios ofrecidos.';
  if (field === '/email') return 'Escribe un correo electrónico válido.';
  if (field === '/name') return 'Escribe tu nombre.';
  const q = field.startsWith('/answers/') ? type.questions.find((x) => x.key === field.slice(9)) : undefined;
  if (q) return `Responde «${q.label}».`;
  return 'Revisa los datos del formulario.';
}

/** The public booking routes, mounted on the projects service's app. */
export function bookingPageRoutes(db: Connection, log: Logger, now: () => Date = () => new Date()): express.Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });
  const typeOf = async (req: express.Request) => {
    const ws = String(req.params.ws);
    const slug = String(req.params.type);
    if (!/^[a-z0-9][a-z0-9-]{0,59}$/.test(slug)) return null;
    const t = await bookingTypes(db).findOne({ slug_key: `${ws}|${slug}`, workspace: ws }).lean<BookingTypeDoc>();
    return t && t.status === 'active' ? t : null;
  };
  const pathOf = (req: express.Request) => {
    const p = String(req.header('x-cuadra-public-path') ?? '');
    return /^\/book\/[a-z0-9-]+\/[a-z0-9-]+$/.test(p) ? p : `/book/${req.params.ws}/${req.params.type}`;
  };
  const notFound = (res: express.Response) => send(res, 404, 'Página no encontrada', '<h1>Página no encontrada</h1><p>Esta página de reservas no existe o ya no recibe reservas.</p>');

  router.get('/public/book/:ws/:type', async (req, res) => {
    try {
      const type = await typeOf(req);
      if (!type) return notFound(res);
      const at = now();
      const { zone, date } = asked(type, req.query, at);
      send(res, 200, `Reservar: ${type.name}`, await pageFor(db, type, zone, date, at, pathOf(req)));
    } catch (err) {
      log.error({ err }, 'booking page failed');
      send(res, 503, 'No disponible', '<h1>No pudimos mostrar los horarios</h1><p>Inténtalo de nuevo en unos minutos.</p>');
    }
  });

  router.post('/public/book/:ws/:type', form, async (req, res) => {
    const at = now();
    let type: BookingTypeDoc | null = null;
    const body = (req.body ?? {}) as Record<string, unknown>;
    const text = (k: string) => (typeof body[k] === 'string' ? (body[k] as string) : '');
    const answers = Object.fromEntries(Object.entries(body).filter(([k, v]) => k.startsWith('p_') && typeof v === 'string' && (v as string).trim()).map(([k, v]) => [k.slice(2), v as string]));
    try {
      type = await typeOf(req);
      if (!type) return notFound(res);
      const { zone, date } = asked(type, body, at);
      const state: FormState = { nombre: text('nombre'), correo: text('correo'), inicio: text('inicio'), answers };
      try {
        if (!text('inicio') || Number.isNaN(Date.parse(text('inicio')))) throw new CuadraError('invalid_input', 'start', { field: '/start' });
        if (!text('nombre').trim() || text('nombre').length > 200) throw new CuadraError('invalid_input', 'name', { field: '/name' });
        if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text('correo').trim()) || text('correo').length > 254) throw new CuadraError('invalid_input', 'email', { field: '/email' });
        const booking = await bookAndInvite(db, type.workspace, type, { start: new Date(text('inicio')).toISOString(), name: text('nombre'), email: text('correo').trim(), time_zone: zone, answers }, at, log);
        const pending = booking.status === 'pending';
        return send(res, 201, pending ? 'Reserva recibida' : 'Reserva confirmada', [
          `<h1>${pending ? 'Reserva recibida' : 'Reserva confirmada'}</h1>`,
          `<p>${esc(type.name)}: ${esc(whenText(booking.start, zone))}.</p>`,
          `<p>${pending ? 'Te escribiremos cuando quede confirmada. ' : ''}${booking.invited_at ? `Enviamos la invitación para tu calendario a ${esc(booking.email)}.` : 'No pudimos enviar la invitación por correo; guarda estos datos.'}</p>`,
        ].join(''));
      } catch (err) {
        if (!(err instanceof CuadraError) || !['invalid_input', 'conflict'].includes(err.code)) throw err;
        const status = err.code === 'conflict' ? 409 : 400;
        return send(res, status, `Reservar: ${type.name}`, await pageFor(db, type, zone, date, at, pathOf(req), { ...state, error: refusalText(err, type), ...(err.code === 'conflict' ? { inicio: '' } : {}) }));
      }
    } catch (err) {
      log.error({ err }, 'public booking failed');
      send(res, 503, 'No disponible', '<h1>No pudimos hacer la reserva</h1><p>Nada quedó reservado. Inténtalo de nuevo en unos minutos.</p>');
    }
  });
  return router;
}
