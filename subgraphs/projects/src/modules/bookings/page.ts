import { createHash, randomBytes } from 'node:crypto';
import { addDays, CuadraError, type Logger } from '@cuadra/shared';
import express from 'express';
import { DateTime } from 'luxon';
import type { Connection } from 'mongoose';
import { bookingTypes, type BookingTypeDoc } from '../booking_types/model.ts';
import { askedRange, slotsOf, type Slot } from './availability.ts';

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

interface FormState { error?: string; nombre?: string; correo?: string; inicio?: string; answers?: Record<string, string>; token?: string }

/** A form's one-time token (`ficha`): the Idempotency-Key of its booking, so the form sent twice books once. */
const FORM_TOKEN = /^[A-Za-z0-9_-]{22}$/;

/** What the gateway sends back to draw: the pipeline's answer to the page's bookings.create. */
export interface BookingOutcome {
  status: number;
  booking?: { status: string; start: string; email: string; invited: boolean };
  error?: { code: string; field?: string };
}

/** The fields of a posted booking form, as typed. */
function formOf(body: Record<string, unknown>): { token: string; state: FormState } {
  const text = (k: string) => (typeof body[k] === 'string' ? (body[k] as string) : '');
  const answers = Object.fromEntries(Object.entries(body).filter(([k, v]) => k.startsWith('p_') && typeof v === 'string' && (v as string).trim()).map(([k, v]) => [k.slice(2), v as string]));
  return { token: text('ficha'), state: { nombre: text('nombre'), correo: text('correo').trim(), inicio: text('inicio'), answers } };
}

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
  // A fresh token for each form drawn, unless the outcome of this one is unknown (then the same, to learn it).
  const token = state.token ?? randomBytes(16).toString('base64url');
  const form: string[] = [`<form method="post" action="${esc(path)}"><input type="hidden" name="zona" value="${esc(zone)}"><input type="hidden" name="fecha" value="${esc(date)}"><input type="hidden" name="ficha" value="${esc(token)}">`];
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
  if (field === '/token') return 'Este formulario ya no es válido; revisa los datos y envíalo de nuevo.';
  if (field === '/time_zone') return 'Elige una zona horaria de la lista.';
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

  /*
   * A booking from the page is `bookings.create` run by the gateway's pipeline as the page's visitor
   * (policies, idempotency, ledger — the same path as any caller's), in three steps: the form is
   * turned into the tool's input here (`/input`), the gateway runs the call with the form's one-time
   * token as its Idempotency-Key, and the page of its outcome is drawn here (`/outcome`). This service
   * never books from the page itself.
   */
  router.post('/public/book/:ws/:type/input', form, async (req, res) => {
    const at = now();
    const body = (req.body ?? {}) as Record<string, unknown>;
    try {
      const type = await typeOf(req);
      if (!type) return notFound(res);
      const f = formOf(body);
      const refuse = async (err: CuadraError) => {
        const { zone, date } = asked(type, body, at);
        return send(res, 400, `Reservar: ${type.name}`, await pageFor(db, type, zone, date, at, pathOf(req), { ...f.state, error: refusalText(err, type) }));
      };
      if (!FORM_TOKEN.test(f.token)) return await refuse(new CuadraError('invalid_input', 'token', { field: '/token' }));
      if (!f.state.inicio || Number.isNaN(Date.parse(f.state.inicio))) return await refuse(new CuadraError('invalid_input', 'start', { field: '/start' }));
      if (!f.state.nombre?.trim() || f.state.nombre.length > 200) return await refuse(new CuadraError('invalid_input', 'name', { field: '/name' }));
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(f.state.correo ?? '') || (f.state.correo ?? '').length > 254) return await refuse(new CuadraError('invalid_input', 'email', { field: '/email' }));
      const { zone } = asked(type, body, at);
      const input = { type_id: type._id, start: new Date(f.state.inicio).toISOString(), name: f.state.nombre.trim(), email: f.state.correo!, time_zone: zone, answers: f.state.answers ?? {} };
      res.status(200).json({ input, token: f.token });
    } catch (err) {
      log.error({ err }, 'public booking form failed');
      send(res, 503, 'No disponible', '<h1>No pudimos hacer la reserva</h1><p>Nada quedó reservado. Inténtalo de nuevo en unos minutos.</p>');
    }
  });

  router.post('/public/book/:ws/:type/outcome', express.json({ limit: '64kb' }), async (req, res) => {
    const at = now();
    const { form: body = {}, outcome } = (req.body ?? {}) as { form?: Record<string, unknown>; outcome?: BookingOutcome };
    try {
      const type = await typeOf(req);
      if (!type || !outcome) return notFound(res);
      const f = formOf(body);
      const { zone, date } = asked(type, body, at);
      const again = async (status: number, error: string, state: FormState) => send(res, status, `Reservar: ${type.name}`, await pageFor(db, type, zone, date, at, pathOf(req), { ...state, error }));
      if (outcome.status === 200 && outcome.booking) {
        const booking = outcome.booking;
        const pending = booking.status === 'pending';
        return send(res, 201, pending ? 'Reserva recibida' : 'Reserva confirmada', [
          `<h1>${pending ? 'Reserva recibida' : 'Reserva confirmada'}</h1>`,
          `<p>${esc(type.name)}: ${esc(whenText(new Date(booking.start), zone))}.</p>`,
          `<p>${pending ? 'Te escribiremos cuando quede confirmada. ' : ''}${booking.invited ? `Enviamos la invitación para tu calendario a ${esc(booking.email)}.` : 'No pudimos enviar la invitación por correo; guarda estos datos.'}</p>`,
        ].join(''));
      }
      if (outcome.status === 202) {
        return send(res, 202, 'Solicitud recibida', [
          '<h1>Solicitud recibida</h1>',
          `<p>${esc(type.name)}: ${esc(whenText(new Date(f.state.inicio ?? ''), zone))}.</p>`,
          '<p>Una persona del equipo revisará tu solicitud antes de reservar el horario. Si la aprueban, recibirás la invitación por correo; hasta entonces el horario no queda reservado.</p>',
        ].join(''));
      }
      const code = outcome.error?.code ?? 'unavailable';
      const refusal = new CuadraError(code === 'conflict' ? 'conflict' : 'invalid_input', code, { field: outcome.error?.field });
      if (code === 'conflict') return await again(409, refusalText(refusal, type), { ...f.state, inicio: '' });
      if (code === 'invalid_input') return await again(400, refusalText(refusal, type), f.state);
      if (code === 'outcome_unknown') {
        // The same token again asks for the real outcome: sending the form once more never books twice.
        return await again(502, 'No pudimos confirmar si la reserva quedó hecha. Envía el formulario otra vez: si ya quedó, verás la confirmación y no se reservará dos veces.', { ...f.state, token: f.token });
      }
      if (code === 'policy_denied' || code === 'approval_required') {
        return send(res, 403, 'Reservas no disponibles', '<h1>Reservas en línea no disponibles</h1><p>Esta empresa no recibe reservas en línea por ahora. Nada quedó reservado; escríbeles directamente.</p>');
      }
      return send(res, 503, 'No disponible', '<h1>No pudimos hacer la reserva</h1><p>Nada quedó reservado. Inténtalo de nuevo en unos minutos.</p>');
    } catch (err) {
      log.error({ err }, 'public booking page failed');
      send(res, 503, 'No disponible', '<h1>No pudimos mostrar el resultado</h1><p>Inténtalo de nuevo en unos minutos.</p>');
    }
  });
  return router;
}
