import { CuadraError } from '@cuadra/shared';
import { checkLiquid, compileMjml } from '../../lib/render.ts';

/**
 * Checks and compiles a template's parts: the subject and texts parse as Liquid, the MJML compiles,
 * and both bodies carry the unsubscribe link (Ley 1581 and Ley 2300: every commercial message offers
 * a way out; the List-Unsubscribe header alone is not shown by every client).
 */
export async function compileTemplate(parts: { subject: string; mjml: string; text: string }): Promise<string> {
  checkLiquid(parts.subject, '/subject');
  checkLiquid(parts.mjml, '/mjml');
  checkLiquid(parts.text, '/text');
  const linked = /\{\{-?\s*unsubscribe_url\s*-?\}\}/;
  if (!linked.test(parts.mjml)) throw new CuadraError('invalid_input', 'The MJML must carry the unsubscribe link: {{ unsubscribe_url }}.', { field: '/mjml' });
  if (!linked.test(parts.text)) throw new CuadraError('invalid_input', 'The plain text must carry the unsubscribe link: {{ unsubscribe_url }}.', { field: '/text' });
  return compileMjml(parts.mjml, '/mjml');
}
