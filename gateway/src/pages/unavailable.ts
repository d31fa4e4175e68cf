import { toCuadraError } from '@cuadra/shared';
import type { Request, Response } from 'express';
import { errorPage } from './authorize.ts';
import { sendPage } from './html.ts';
import { localeOf, pageChrome } from './i18n.ts';

/** Seconds a caller refused during an outage is asked to wait (`Retry-After`). */
export const OUTAGE_RETRY_SECONDS = 5;

/**
 * True when `err` is a store that cannot be reached (the database or Redis): the contract's
 * `unavailable` (CONTRACT.md §9), never the caller's fault and never `internal`.
 */
export function isOutage(err: unknown): boolean {
  return toCuadraError(err).code === 'unavailable';
}

/**
 * The answer of a sign-in page while a store it needs is down: 503 with `Retry-After`, a page
 * that says nothing was done — not a form that cannot work, nor a 500 (CONTRACT.md §9).
 */
export function sendUnavailablePage(req: Request, res: Response): void {
  const t = localeOf(req, res);
  res.setHeader('Retry-After', String(OUTAGE_RETRY_SECONDS));
  sendPage(res, { status: 503, title: t.t('unavailable.title'), ...pageChrome(req, t), body: errorPage(t, t.t('unavailable.title'), t.t('unavailable.body')) });
}
