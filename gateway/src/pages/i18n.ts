import type { Request, Response } from 'express';

/**
 * The people's pages speak Spanish (Colombia) first and English on request. A page asks
 * {@link localeOf} once per request: `?lang=en|es` chooses (and is remembered in a cookie for a
 * year), else the cookie, else Spanish. Tool names and machine codes are never translated.
 */
export type Locale = 'es-CO' | 'en';
export const LOCALES: readonly Locale[] = ['es-CO', 'en'];
export const DEFAULT_LOCALE: Locale = 'es-CO';
const LANG_COOKIE = 'cuadra_lang';

const es = {
  'brand.footer': 'Cuadra · estas páginas no cargan nada de otros sitios.',
  'lang.switch': 'English',
  'lang.switch.label': 'Ver en inglés',
  'nav.label': 'Navegación',
  'nav.approvals': 'Aprobaciones',
  'nav.dashboards': 'Tableros',
  'nav.skip': 'Saltar al contenido',
  'signOut': 'Cerrar sesión',
  'error.title': 'Algo salió mal',
  'error.retry': 'Inténtalo de nuevo en un momento.',
  // sign-in
  'signIn.title': 'Iniciar sesión',
  'signIn.heading': 'Inicia sesión en Cuadra',
  'signIn.email': 'Correo electrónico',
  'signIn.password': 'Contraseña',
  'signIn.submit': 'Iniciar sesión',
  'signIn.expired': 'Este formulario venció o vino de otro sitio. Inicia sesión de nuevo.',
  'signIn.missing': 'Escribe tu correo y tu contraseña.',
  'signIn.throttled': 'Demasiados intentos. Espera {minutes} minuto(s) e inténtalo de nuevo.',
  'signIn.wrong': 'El correo o la contraseña no son correctos.',
  // dashboards chrome
  'dashboards.title': 'Tableros',
  'dashboards.none': 'Aún no hay tableros.',
  'dashboards.missing.title': 'Ese tablero no existe',
  'dashboards.missing.text': 'Este tablero no existe, o pertenece a un espacio de trabajo del que no eres miembro.',
  'dashboard.skip': 'Saltar al tablero',
  'dashboard.loading': 'Cargando el tablero…',
  'dashboard.noscript': 'Este tablero necesita JavaScript para dibujar sus datos.',
  // approvals inbox
  'inbox.title': 'Aprobaciones',
  'inbox.heading': 'Aprobaciones de {workspace}',
  'inbox.workspace': 'Espacio de trabajo',
  'inbox.pending': 'Esperan tu decisión',
  'inbox.pending.none': 'Nada espera tu decisión.',
  'inbox.done': 'Decididas y ejecutadas',
  'inbox.done.none': 'Aún no hay llamadas decididas.',
  'inbox.live.connected': 'Las nuevas solicitudes aparecen aquí sin recargar.',
  'inbox.live.new': 'Llegó una solicitud nueva.',
  'inbox.live.updated': 'La lista se actualizó.',
  'inbox.askedBy': 'Pidió',
  'inbox.requestedAt': 'Pedido el',
  'inbox.policy': 'Retenida por la política',
  'inbox.policy.unknown': 'no registrada',
  'inbox.expires': 'Vence el',
  'inbox.tool': 'Herramienta',
  'inbox.input': 'Ver la entrada completa',
  'inbox.reason': 'Motivo (opcional)',
  'inbox.approve': 'Aprobar',
  'inbox.reject': 'Rechazar',
  'inbox.decidedBy': 'Decidió',
  'inbox.decidedAt': 'el',
  'inbox.reasonShown': 'Motivo',
  'inbox.result': 'Resultado',
  'inbox.result.none': 'Sin resultado todavía.',
  'inbox.result.notRun': 'No se ejecutó.',
  'actor.web': 'las páginas de Cuadra',
  'inbox.result.show': 'Ver el resultado',
  'inbox.noWorkspace': 'No eres miembro de ningún espacio de trabajo.',
  'inbox.cannotRead': 'Tu rol en este espacio de trabajo no permite ver las aprobaciones ({code}).',
  'inbox.decided.approve': 'Aprobaste la llamada {tool}.',
  'inbox.decided.reject': 'Rechazaste la llamada {tool}.',
  'inbox.refused': 'No se pudo decidir: {error} ({code})',
  'inbox.expired': 'Este formulario venció o vino de otro sitio. Vuelve a intentarlo.',
  'inbox.more': 'Ver más antiguas',
  'actor.agent': 'el agente {id}',
  'actor.oauth_app': 'la aplicación {id}',
  'actor.api_key': 'la clave {id}',
  'actor.member': '{id}',
  'actor.service': 'el servicio {id}',
  'actor.other': '{type} {id}',
  'actor.role': 'rol',
  'status.pending': 'Pendiente',
  'status.approved': 'Aprobada',
  'status.rejected': 'Rechazada',
  'status.expired': 'Vencida',
  'status.executing': 'Ejecutándose',
  'status.executed': 'Ejecutada',
  'status.failed': 'Falló',
  // what a held call wants done
  'do.parties.create': 'Crear {kind} «{name}»',
  'do.parties.update': 'Cambiar los datos de {party}',
  'do.parties.archive': 'Archivar a {party}',
  'do.kind.customer': 'el cliente',
  'do.kind.vendor': 'el proveedor',
  'do.kind.both': 'el cliente y proveedor',
  'do.kind.other': 'el tercero',
  'do.payments.register': 'Registrar un pago de {amount} de {party}',
  'do.payments.register.against': 'Registrar un pago de {amount} de {party} contra {documents}',
  'do.bills.pay': 'Pagar {amount} a {party} por {documents}',
  'do.invoices.create': 'Crear una factura para {party} por {amount}',
  'do.invoices.create.lines': 'Crear una factura para {party} con {count} línea(s)',
  'do.invoices.post': 'Emitir la factura {document}',
  'do.invoices.send': 'Enviar la factura {document}',
  'do.invoices.update': 'Cambiar la factura {document}',
  'do.invoices.credit_note': 'Hacer una nota crédito sobre la factura {document}',
  'do.bills.create': 'Registrar una factura de compra de {party}',
  'do.bills.post': 'Contabilizar la factura de compra {document}',
  'do.bills.void': 'Anular la factura de compra {document}',
  'do.items.create': 'Crear el producto «{name}»',
  'do.api_keys.create': 'Crear la clave «{name}» con el rol {role}',
  'do.api_keys.revoke': 'Revocar la clave {id}',
  'do.policies.delete': 'Borrar la política {id}',
  'do.policies.create': 'Crear la política «{name}»',
  'do.members.invite': 'Invitar a {email} como {role}',
  'do.generic': 'Llamar {tool}',
  'do.generic.with': 'Llamar {tool} con {args}',
} as const;

export type MessageKey = keyof typeof es;

const en: Record<MessageKey, string> = {
  'brand.footer': 'Cuadra · these pages never load anything from other sites.',
  'lang.switch': 'Español',
  'lang.switch.label': 'Ver en español',
  'nav.label': 'Navigation',
  'nav.approvals': 'Approvals',
  'nav.dashboards': 'Dashboards',
  'nav.skip': 'Skip to the content',
  'signOut': 'Sign out',
  'error.title': 'Something went wrong',
  'error.retry': 'Try again in a moment.',
  'signIn.title': 'Sign in',
  'signIn.heading': 'Sign in to Cuadra',
  'signIn.email': 'E-mail',
  'signIn.password': 'Password',
  'signIn.submit': 'Sign in',
  'signIn.expired': 'This form expired or came from another site. Sign in again.',
  'signIn.missing': 'Enter your e-mail and password.',
  'signIn.throttled': 'Too many sign-in attempts. Wait {minutes} minute(s) and try again.',
  'signIn.wrong': 'The e-mail or password is not right.',
  'dashboards.title': 'Dashboards',
  'dashboards.none': 'No dashboards yet.',
  'dashboards.missing.title': 'No such dashboard',
  'dashboards.missing.text': 'This dashboard does not exist, or it belongs to a workspace you are not a member of.',
  'dashboard.skip': 'Skip to the dashboard',
  'dashboard.loading': 'Loading the dashboard…',
  'dashboard.noscript': 'This dashboard needs JavaScript to draw its data.',
  'inbox.title': 'Approvals',
  'inbox.heading': 'Approvals of {workspace}',
  'inbox.workspace': 'Workspace',
  'inbox.pending': 'Waiting for your decision',
  'inbox.pending.none': 'Nothing is waiting for your decision.',
  'inbox.done': 'Decided and run',
  'inbox.done.none': 'No decided calls yet.',
  'inbox.live.connected': 'New requests appear here without reloading.',
  'inbox.live.new': 'A new request arrived.',
  'inbox.live.updated': 'The list was updated.',
  'inbox.askedBy': 'Asked by',
  'inbox.requestedAt': 'Requested on',
  'inbox.policy': 'Held by the policy',
  'inbox.policy.unknown': 'not recorded',
  'inbox.expires': 'Expires on',
  'inbox.tool': 'Tool',
  'inbox.input': 'Show the full input',
  'inbox.reason': 'Reason (optional)',
  'inbox.approve': 'Approve',
  'inbox.reject': 'Reject',
  'inbox.decidedBy': 'Decided by',
  'inbox.decidedAt': 'on',
  'inbox.reasonShown': 'Reason',
  'inbox.result': 'Result',
  'inbox.result.none': 'No result yet.',
  'inbox.result.notRun': 'It did not run.',
  'actor.web': 'the Cuadra pages',
  'inbox.result.show': 'Show the result',
  'inbox.noWorkspace': 'You are not a member of any workspace.',
  'inbox.cannotRead': 'Your role in this workspace does not let you see approvals ({code}).',
  'inbox.decided.approve': 'You approved the {tool} call.',
  'inbox.decided.reject': 'You rejected the {tool} call.',
  'inbox.refused': 'Could not decide: {error} ({code})',
  'inbox.expired': 'This form expired or came from another site. Try again.',
  'inbox.more': 'Show older',
  'actor.agent': 'the agent {id}',
  'actor.oauth_app': 'the app {id}',
  'actor.api_key': 'the key {id}',
  'actor.member': '{id}',
  'actor.service': 'the service {id}',
  'actor.other': '{type} {id}',
  'actor.role': 'role',
  'status.pending': 'Pending',
  'status.approved': 'Approved',
  'status.rejected': 'Rejected',
  'status.expired': 'Expired',
  'status.executing': 'Running',
  'status.executed': 'Done',
  'status.failed': 'Failed',
  'do.parties.create': 'Create {kind} “{name}”',
  'do.parties.update': 'Change the details of {party}',
  'do.parties.archive': 'Archive {party}',
  'do.kind.customer': 'the customer',
  'do.kind.vendor': 'the vendor',
  'do.kind.both': 'the customer and vendor',
  'do.kind.other': 'the party',
  'do.payments.register': 'Register a payment of {amount} from {party}',
  'do.payments.register.against': 'Register a payment of {amount} from {party} against {documents}',
  'do.bills.pay': 'Pay {amount} to {party} for {documents}',
  'do.invoices.create': 'Create an invoice for {party} of {amount}',
  'do.invoices.create.lines': 'Create an invoice for {party} with {count} line(s)',
  'do.invoices.post': 'Issue the invoice {document}',
  'do.invoices.send': 'Send the invoice {document}',
  'do.invoices.update': 'Change the invoice {document}',
  'do.invoices.credit_note': 'Make a credit note on the invoice {document}',
  'do.bills.create': 'Record a bill from {party}',
  'do.bills.post': 'Post the bill {document}',
  'do.bills.void': 'Void the bill {document}',
  'do.items.create': 'Create the item “{name}”',
  'do.api_keys.create': 'Create the key “{name}” with the role {role}',
  'do.api_keys.revoke': 'Revoke the key {id}',
  'do.policies.delete': 'Delete the policy {id}',
  'do.policies.create': 'Create the policy “{name}”',
  'do.members.invite': 'Invite {email} as {role}',
  'do.generic': 'Call {tool}',
  'do.generic.with': 'Call {tool} with {args}',
};

const CATALOGS: Record<Locale, Record<MessageKey, string>> = { 'es-CO': es, en };

/** A translator bound to one locale: messages, money, dates. */
export interface Translator {
  locale: Locale;
  /** The `lang` attribute of the page. */
  lang: string;
  t(key: MessageKey, vars?: Record<string, string | number>): string;
  /** An amount in integer minor units, e.g. `COP 1.200.000` (es-CO) or `COP 1,200,000` (en). */
  money(minor: number, currency: string): string;
  /** A calendar date, `22/11/2026` (es-CO) or `11/22/2026` (en). */
  date(iso: string | Date): string;
  /** A date and time of day, in Bogotá's time. */
  dateTime(iso: string | Date): string;
  number(value: number): string;
}

/** Minor-unit digits of a currency per ISO 4217 (what the contract's integer amounts count). */
export function minorDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

const TIME_ZONE = 'America/Bogota';

export function translator(locale: Locale): Translator {
  const catalog = CATALOGS[locale];
  const intlLocale = locale === 'en' ? 'en-US' : 'es-CO';
  return {
    locale,
    lang: locale === 'en' ? 'en' : 'es-CO',
    t(key, vars) {
      const text = catalog[key] ?? es[key] ?? key;
      return vars ? text.replace(/\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m)) : text;
    },
    money(minor, currency) {
      // ISO 4217 gives COP two minor digits; whole pesos are written without them (COP 1.200.000).
      const digits = currency === 'COP' ? 2 : minorDigits(currency);
      const value = minor / 10 ** digits;
      const whole = Number.isInteger(value);
      try {
        return new Intl.NumberFormat(intlLocale, { style: 'currency', currency, currencyDisplay: 'code', minimumFractionDigits: whole ? 0 : digits, maximumFractionDigits: digits }).format(value).replace(/\u00a0/g, ' ');
      } catch {
        return `${currency} ${value}`;
      }
    },
    date(iso) {
      return new Intl.DateTimeFormat(intlLocale, { day: '2-digit', month: '2-digit', year: 'numeric', timeZone: TIME_ZONE }).format(new Date(iso));
    },
    dateTime(iso) {
      return new Intl.DateTimeFormat(intlLocale, { day: '2-digit', month: '2-digit', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: TIME_ZONE }).format(new Date(iso)).replace(/\u00a0/g, ' ');
    },
    number(value) {
      return new Intl.NumberFormat(intlLocale).format(value);
    },
  };
}

function parseLang(value: unknown): Locale | null {
  if (typeof value !== 'string') return null;
  const v = value.toLowerCase();
  if (v === 'en' || v.startsWith('en-')) return 'en';
  if (v === 'es' || v.startsWith('es-')) return 'es-CO';
  return null;
}

function cookieValue(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...rest] = part.trim().split('=');
    if (k === name) return rest.join('=');
  }
  return undefined;
}

/**
 * The locale of this request: `?lang=` (remembered in a cookie), else the remembered choice,
 * else Spanish (Colombia). The browser's Accept-Language is not consulted: Spanish is the default.
 */
export function localeOf(req: Request, res: Response): Translator {
  const asked = parseLang(req.query?.lang);
  if (asked) {
    const secure = req.protocol === 'https' || /^https:/.test(process.env.PUBLIC_URL ?? '');
    res.append('Set-Cookie', `${LANG_COOKIE}=${asked}; Path=/; SameSite=Lax; Max-Age=${365 * 24 * 3600}${secure ? '; Secure' : ''}`);
    return translator(asked);
  }
  return translator(parseLang(cookieValue(req, LANG_COOKIE)) ?? DEFAULT_LOCALE);
}

/** The link that switches this page to the other language (same path and query, `lang` replaced). */
export function switchHref(req: Request, current: Locale): string {
  const url = new URL(req.originalUrl, 'http://x');
  url.searchParams.set('lang', current === 'en' ? 'es' : 'en');
  // A one-time notice (an approvals decision) is not shown again in the other language.
  url.searchParams.delete('decided');
  url.searchParams.delete('tool');
  return `${url.pathname}${url.search}`;
}

/** What a sign-in style page ({@link sendPage}) needs to speak the person's language. */
export function pageChrome(req: Request, t: Translator): { lang: string; footer: string; langSwitch: { href: string; text: string; lang: string } } {
  return { lang: t.lang, footer: t.t('brand.footer'), langSwitch: { href: switchHref(req, t.locale), text: t.t('lang.switch'), lang: t.locale === 'en' ? 'es' : 'en' } };
}
