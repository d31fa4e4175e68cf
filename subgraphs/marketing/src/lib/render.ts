import { Liquid, type FS } from 'liquidjs';
import { CuadraError } from '@cuadra/shared';

/*
 * Templates: MJML compiled to HTML by the MJML compiler (once, when a template is saved), and merge
 * fields in Liquid (liquidjs) filled per recipient. Nothing in a template runs as code: Liquid has
 * no function calls, reads only the plain data given (own properties only), includes nothing from
 * disk (the file system it is given refuses every read; MJML's mj-include is ignored), and a render
 * is bounded in size and time.
 */

/** A file system that holds nothing: `{% include %}`, `{% render %}` and `{% layout %}` find no file. */
const NO_FILES: FS = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async (file) => { throw new Error(`Templates include no files (${file}).`); },
  readFileSync: (file) => { throw new Error(`Templates include no files (${file}).`); },
  resolve: (_root, file) => file,
  contains: async () => false,
  sep: '/',
};

const limits = { parseLimit: 200_000, renderLimit: 1_000, memoryLimit: 5_000_000 };

/** HTML bodies: every merge value is HTML-escaped, so a party named `<script>` is text. */
const htmlEngine = new Liquid({ fs: NO_FILES, root: [], partials: [], layouts: [], ownPropertyOnly: true, strictFilters: true, outputEscape: 'escape', relativeReference: false, ...limits });
/** Subjects and plain-text bodies: no escaping (there is no markup to break out of). */
const textEngine = new Liquid({ fs: NO_FILES, root: [], partials: [], layouts: [], ownPropertyOnly: true, strictFilters: true, relativeReference: false, ...limits });

/** What a template's merge fields can read. */
export interface MergeData {
  party: { id: string; name: string; first_name: string; email: string | null };
  sender: { name: string; email: string };
  unsubscribe_url: string;
}

/** Compiles MJML to HTML, refusing what the compiler finds wrong (`invalid_input` at `field`). */
export async function compileMjml(mjml: string, field: string): Promise<string> {
  // Loaded at the first message compiled rather than at the service's start (the import was ~13 % of its start's CPU).
  const { default: mjml2html } = await import('mjml');
  try {
    // No default web fonts: MJML links Google Fonts for its default Ubuntu, so every open of a message
    // would tell a third party who read it when (no tracking by default, issue 36); system fonts instead.
    const out = await mjml2html(mjml, { validationLevel: 'strict', ignoreIncludes: true, keepComments: false, fonts: {} });
    return out.html;
  } catch (err) {
    const first = (err as { errors?: { formattedMessage?: string; message?: string }[] }).errors?.[0];
    throw new CuadraError('invalid_input', `The MJML does not compile: ${first?.message ?? (err as Error).message}`.slice(0, 500), { field });
  }
}

/** Checks that a Liquid text parses (unknown filters and broken tags refused at `field`). */
export function checkLiquid(text: string, field: string): void {
  try {
    htmlEngine.parse(text);
  } catch (err) {
    throw new CuadraError('invalid_input', `The merge fields do not parse: ${(err as Error).message.split('\n')[0]}`.slice(0, 500), { field });
  }
}

/** Fills the merge fields of a subject, HTML body and text body. A template that fails at render is `invalid_input` at `field`. */
export async function renderMessage(parts: { subject: string; html: string; text: string }, data: MergeData): Promise<{ subject: string; html: string; text: string }> {
  const scope = data as unknown as Record<string, unknown>;
  try {
    const [subject, html, text] = await Promise.all([
      textEngine.parseAndRender(parts.subject, scope),
      htmlEngine.parseAndRender(parts.html, scope),
      textEngine.parseAndRender(parts.text, scope),
    ]);
    // A subject is one header line: line breaks in merged values never start another header.
    return { subject: subject.replace(/[\r\n]+/g, ' ').trim(), html, text };
  } catch (err) {
    throw new CuadraError('invalid_input', `The template could not be filled: ${(err as Error).message.split('\n')[0]}`.slice(0, 500), { field: '/template_id' });
  }
}

/** The first name a greeting uses: the first word of the name. */
export function firstName(name: string): string {
  return name.trim().split(/\s+/)[0] ?? '';
}
