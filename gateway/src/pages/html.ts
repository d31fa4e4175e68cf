import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';

/** Escapes text for HTML content and double-quoted attributes. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/** A piece of markup that is already safe (built with {@link html} or escaped). */
export class SafeHtml {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

/** Tagged template that escapes every interpolated value unless it is {@link SafeHtml} (or an array of them). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  values.forEach((v, i) => {
    const part = Array.isArray(v) ? v.map((x) => (x instanceof SafeHtml ? x.value : escapeHtml(x))).join('') : v instanceof SafeHtml ? v.value : escapeHtml(v);
    out += part + strings[i + 1];
  });
  return new SafeHtml(out);
}

// Colours chosen for contrast ≥ 4.5:1 on their backgrounds (WCAG 2.2 AA); focus is always visible.
const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f4f5f7}
header,main,footer{max-width:34rem;margin:0 auto;padding:0 1rem}
header{padding-top:2rem;font-weight:700;font-size:1.1rem;color:#1f3a8a;display:flex;justify-content:space-between}
header .lang{font-weight:600;font-size:1rem;color:#1f3a8a}
main{background:#fff;border:1px solid #d0d4dc;border-radius:8px;padding:1.5rem;margin-top:1rem}
h1{font-size:1.4rem;margin:0 0 1rem}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input[type=email],input[type=password],input[type=text],select{width:100%;padding:.6rem;border:1px solid #5f6b7a;border-radius:6px;font:inherit;color:#1a1a1a;background:#fff}
button{font:inherit;font-weight:600;padding:.6rem 1.2rem;border-radius:6px;border:2px solid #1f3a8a;cursor:pointer;margin:1.25rem .5rem 0 0}
button.primary{background:#1f3a8a;color:#fff}
button.secondary{background:#fff;color:#1f3a8a}
:focus-visible{outline:3px solid #b45309;outline-offset:2px}
.error{background:#fdecea;border:1px solid #b3261e;color:#8c1d18;padding:.75rem;border-radius:6px}
.note{color:#4a5361;font-size:.95rem}
dl{margin:0}dt{font-weight:600;margin-top:.75rem}dd{margin:0}
ul.scopes{padding-left:1.2rem}
code{background:#eef0f4;padding:0 .25rem;border-radius:4px}
footer{color:#4a5361;font-size:.85rem;padding:1rem}
`;

/**
 * Sends a server-rendered page with the headers every sign-in page carries: a strict CSP
 * (no script at all; the one style block by nonce), no framing, no caching, no referrer.
 * `formActions` lists extra origins a form may lead to (the client's redirect after consent).
 */
export function sendPage(res: Response, opts: { status?: number; title: string; body: SafeHtml; formActions?: string[]; lang?: string; footer?: string; langSwitch?: { href: string; text: string; lang: string } }): void {
  const nonce = randomBytes(16).toString('base64');
  const formAction = ["'self'", ...(opts.formActions ?? [])].join(' ');
  res.setHeader('Content-Security-Policy', `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'self' data:; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
  res.status(opts.status ?? 200).type('html').send(
    `<!doctype html>\n<html lang="${escapeHtml(opts.lang ?? 'en')}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
      `<title>${escapeHtml(opts.title)} · Cuadra</title><link rel="icon" href="data:,"><style nonce="${nonce}">${STYLE}</style></head>` +
      `<body><header role="banner">Cuadra${opts.langSwitch ? ` <a class="lang" href="${escapeHtml(opts.langSwitch.href)}" lang="${escapeHtml(opts.langSwitch.lang)}" hreflang="${escapeHtml(opts.langSwitch.lang)}">${escapeHtml(opts.langSwitch.text)}</a>` : ''}</header><main id="main">${opts.body.value}</main>` +
      `<footer role="contentinfo">${escapeHtml(opts.footer ?? 'Cuadra · sign-in pages never load anything from other sites.')}</footer></body></html>`,
  );
}

const CSRF_COOKIE = 'cuadra_csrf';

/**
 * CSRF protection by a signed double submit: a random value in an HttpOnly, SameSite=Strict
 * cookie, and in each form an HMAC of that value and the form's purpose. A page on another
 * site can neither read the cookie nor compute the HMAC, so it cannot forge the pair.
 */
export class CsrfGuard {
  readonly #secret: Buffer;
  readonly #secure: boolean;

  constructor(secret: Buffer, secure: boolean) {
    this.#secret = secret;
    this.#secure = secure;
  }

  static cookieOf(req: Request): string | undefined {
    const header = req.headers.cookie ?? '';
    for (const part of header.split(';')) {
      const [name, ...rest] = part.trim().split('=');
      if (name === CSRF_COOKIE) return rest.join('=');
    }
    return undefined;
  }

  /** The form token for `purpose`, setting the cookie when the browser has none yet. */
  issue(req: Request, res: Response, purpose: string): string {
    let value = CsrfGuard.cookieOf(req);
    if (!value || !/^[A-Za-z0-9_-]{43}$/.test(value)) {
      value = randomBytes(32).toString('base64url');
      res.append('Set-Cookie', `${CSRF_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict${this.#secure ? '; Secure' : ''}`);
      // Later `issue` calls in the same request must see the new value.
      req.headers.cookie = `${req.headers.cookie ? `${req.headers.cookie}; ` : ''}${CSRF_COOKIE}=${value}`;
    }
    return this.sign(`${purpose}|${value}`);
  }

  /** True when the form token belongs to this browser's cookie and this purpose. */
  check(req: Request, purpose: string, token: unknown): boolean {
    const value = CsrfGuard.cookieOf(req);
    if (!value || typeof token !== 'string') return false;
    return sameText(this.sign(`${purpose}|${value}`), token);
  }

  /** HMAC-SHA-256 of `data`, base64url. */
  sign(data: string): string {
    return createHmac('sha256', this.#secret).update(data).digest('base64url');
  }
}

/** Constant-time comparison of two strings. */
export function sameText(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/** The address a request came from (the gateway does not trust proxy headers). */
export function clientAddress(req: Request): string {
  return req.socket.remoteAddress ?? 'unknown';
}
