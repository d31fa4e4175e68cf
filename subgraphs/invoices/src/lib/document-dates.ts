import { CuadraError, workspaceToday, type ToolContext } from '@cuadra/shared';

/** "Today" for the workspace's documents: the date of the call's instant in the workspace's time zone (Bogotá's for Colombia). */
export function documentToday(ctx: Pick<ToolContext, 'principal' | 'now'>): string {
  return workspaceToday(ctx.principal, ctx.now);
}

/**
 * Refuses a document dated after today in the workspace's calendar (CONTRACT §10), naming `field`:
 * an invoice dated tomorrow would carry tomorrow's date with today's signature and numbering, which
 * DIAN refuses (Anexo Técnico 1.9, FAD09e: the issue date is the signing date) and no book may show.
 */
export function assertNotAfterToday(ctx: Pick<ToolContext, 'principal' | 'now'>, date: string, field = '/issue_date'): void {
  const today = documentToday(ctx);
  if (date > today) throw new CuadraError('invalid_input', `The document is dated ${date}, after today (${today} in the workspace's calendar); a document cannot be dated in the future.`, { field });
}
