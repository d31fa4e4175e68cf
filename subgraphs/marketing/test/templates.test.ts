import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { compileMjml, renderMessage, type MergeData } from '../src/lib/render.ts';
import { colombianHolidays, inSendWindow, nextSendWindow } from '../src/lib/windows.ts';
import { createServer, name } from '../src/server.ts';

let marketing: TestSubgraph;

beforeAll(async () => {
  marketing = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await marketing?.close();
});

const data: MergeData = {
  party: { id: 'pty_1', name: 'Ana <script>alert(1)</script> Pérez', first_name: 'Ana', email: 'ana@example.co' },
  sender: { name: 'Tienda SAS', email: 'hola@tienda.example' },
  unsubscribe_url: 'https://cuadra.example/u/tok',
};
const LINK = '<mj-text><a href="{{ unsubscribe_url }}">Salir</a></mj-text>';
const mjml = (inner: string) => `<mjml><mj-body><mj-section><mj-column><mj-text>${inner}</mj-text>${LINK}</mj-column></mj-section></mj-body></mjml>`;
const TEXT = 'Salir: {{ unsubscribe_url }}';

describe('templates run no code (liquidjs sandboxed, MJML without includes)', () => {
  it('reads no prototype, constructor or global from a merge field', async () => {
    const hostile = [
      "{{ party.constructor.constructor('return process')() }}",
      '{{ party.constructor }}', '{{ party.__proto__ }}', '{{ party.name.constructor.name }}', '{{ process.env.HOME }}',
      '{{ global }}', '{{ this }}', '{{ party.toString }}', '{{ sender.hasOwnProperty }}',
    ];
    for (const h of hostile) {
      let out: string;
      try {
        out = (await renderMessage({ subject: h, html: h, text: h }, data)).text;
      } catch (err) {
        // A template liquidjs will not parse is refused as bad input, never run.
        expect(err).toMatchObject({ code: 'invalid_input', field: '/template_id' });
        continue;
      }
      // Nothing read: each renders empty (no "function", no "Object", no path of this machine).
      expect({ h, out }).toEqual({ h, out: '' });
    }
    expect((await renderMessage({ subject: '{{ party.first_name }}', html: '', text: '' }, data)).subject).toBe('Ana');
  });

  it('includes no file, and a runaway loop is stopped', async () => {
    for (const h of ["{% include '/etc/passwd' %}", "{% render '../../package.json' %}", "{% layout '/etc/hostname' %}x"]) {
      await expect(renderMessage({ subject: 's', html: h, text: 't' }, data)).rejects.toMatchObject({ code: 'invalid_input' });
    }
    await expect(renderMessage({ subject: 's', html: '{% for i in (1..100000000) %}{% for j in (1..100000000) %}x{% endfor %}{% endfor %}', text: 't' }, data)).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('escapes merge values in HTML, and keeps a subject on one header line', async () => {
    const out = await renderMessage({ subject: 'Hola {{ party.name }}\r\nBcc: todos@example.com', html: '<p>{{ party.name }}</p>', text: '{{ party.name }}' }, data);
    expect(out.html).toBe('<p>Ana &lt;script&gt;alert(1)&lt;/script&gt; Pérez</p>');
    expect(out.subject).not.toMatch(/[\r\n]/);
    expect(out.text).toBe('Ana <script>alert(1)</script> Pérez'); // plain text has no markup to break out of
  });

  it('refuses, at the field, a template without the unsubscribe link, MJML that does not compile, broken merge fields and MJML includes', async () => {
    const owner = testPrincipal();
    const refused = async (input: Record<string, unknown>, field: string) => {
      const r = await marketing.call('email_templates.create', { name: 'T', ...input }, owner);
      expect({ field, r: { ok: r.ok, code: r.code, field: r.field } }).toEqual({ field, r: { ok: false, code: 'invalid_input', field } });
    };
    await refused({ mjml: mjml('Hola').replace(LINK, '') }, '/mjml');
    await refused({ text: 'Hola, sin enlace' }, '/text');
    await refused({ mjml: '<mjml><mj-body><mj-nonsense/></mj-body></mjml>'.replace('</mj-body>', `${LINK}</mj-body>`) }, '/mjml');
    await refused({ subject: 'Hola {{ party.name | nofilter }}' }, '/subject');
    await refused({ mjml: mjml('{% if %}') }, '/mjml');
    await refused({ text: `${TEXT} {{ unclosed` }, '/text');
    // mj-include reads a file at compile time: ignored, so no file of the server reaches the HTML.
    const inc = await marketing.call('email_templates.create', { name: 'Inc', mjml: mjml('x').replace('<mj-body>', '<mj-body><mj-include path="/etc/passwd" />') }, owner);
    if (inc.ok) {
      expect(JSON.stringify(inc.output)).not.toContain('root:');
    } else {
      expect(inc).toMatchObject({ code: 'invalid_input', field: '/mjml' });
    }
    expect((await marketing.call('email_templates.list', {}, owner)).output.rows.map((r: { name: string }) => r.name)).toEqual(inc.ok ? ['Inc'] : []);
  });

  it('starts from the Spanish defaults, is updated with a new version, and is sealed from other workspaces and from viewers', async () => {
    const owner = testPrincipal();
    const t = (await marketing.call('email_templates.create', { name: 'Boletín' }, owner)).output.template;
    expect(t).toMatchObject({ subject: 'Novedades de {{ sender.name }}', version: 1 });
    expect(t.mjml).toContain('<mjml lang="es">');
    expect(t.text).toContain('{{ unsubscribe_url }}');
    const u = await marketing.call('email_templates.update', { id: t.id, subject: 'Ofertas de {{ sender.name }}' }, owner);
    expect(u.output.template).toMatchObject({ subject: 'Ofertas de {{ sender.name }}', version: 2 });
    expect(await marketing.call('email_templates.update', { id: t.id, subject: 'x' }, testPrincipal())).toMatchObject({ ok: false, code: 'not_found' });
    expect(await marketing.call('email_templates.create', { name: 'x' }, { ...owner, role: 'viewer' })).toMatchObject({ ok: false, code: 'policy_denied' });
    expect((await marketing.call('email_templates.list', {}, testPrincipal())).output.rows).toEqual([]);
  });
});

describe('compiled messages load nothing from third parties', () => {
  it('carries no web-font link (MJML would add Google Fonts for its default Ubuntu): opening a message tells no one', async () => {
    const compiled = await compileMjml(mjml('Hola'), '/mjml');
    expect(compiled).toContain('Hola');
    expect(compiled).not.toMatch(/fonts\.googleapis\.com|@import|<link\b/i);
  });
});

describe('Ley 2300 de 2023 send windows (Bogotá, UTC−5)', () => {
  it('knows the 19 public holidays of Colombia in 2026 (Ley 51 de 1983 and Ley 2578 de 2026), Monday-moved', () => {
    // The 2026 calendar: 1 Jan, 12 Jan (Reyes), 23 Mar (San José), 2–3 Apr (Jueves/Viernes Santo),
    // 1 May, 18 May (Ascensión), 8 Jun (Corpus), 15 Jun (Sagrado Corazón), 29 Jun (San Pedro),
    // 13 Jul (Virgen de Chiquinquirá, 9 July moved to Monday: Ley 2578 de 2026 art. 6 with Ley 51 de 1983), 20 Jul,
    // 7 Aug, 17 Aug (Asunción), 12 Oct (Raza), 2 Nov (Todos los Santos), 16 Nov (Independencia de Cartagena),
    // 8 Dec, 25 Dec: 19 days. Easter Sunday is no holiday by law (it is a Sunday: closed anyway).
    expect([...colombianHolidays(2026)].sort()).toEqual([
      '2026-01-01', '2026-01-12', '2026-03-23', '2026-04-02', '2026-04-03', '2026-05-01', '2026-05-18', '2026-06-08', '2026-06-15',
      '2026-06-29', '2026-07-13', '2026-07-20', '2026-08-07', '2026-08-17', '2026-10-12', '2026-11-02', '2026-11-16', '2026-12-08', '2026-12-25',
    ]);
  });

  it('opens Monday–Friday 7:00–19:00 and Saturday 8:00–15:00, never Sundays or holidays, and moves a send to the next opening', () => {
    const at = (s: string) => new Date(s);
    // Monday 30 November 2026: 6:59 closed, 7:00 open, 18:59 open, 19:00 closed.
    expect(inSendWindow(at('2026-11-30T06:59:00-05:00'))).toBe(false);
    expect(inSendWindow(at('2026-11-30T07:00:00-05:00'))).toBe(true);
    expect(inSendWindow(at('2026-11-30T18:59:00-05:00'))).toBe(true);
    expect(inSendWindow(at('2026-11-30T19:00:00-05:00'))).toBe(false);
    // Saturday 5 December: 7:59 closed, 8:00 open, 15:00 closed. Sunday 6 December: closed all day.
    expect(inSendWindow(at('2026-12-05T07:59:00-05:00'))).toBe(false);
    expect(inSendWindow(at('2026-12-05T08:00:00-05:00'))).toBe(true);
    expect(inSendWindow(at('2026-12-05T15:00:00-05:00'))).toBe(false);
    expect(inSendWindow(at('2026-12-06T12:00:00-05:00'))).toBe(false);
    // Tuesday 8 December 2026 (Inmaculada Concepción) is a holiday, at noon.
    expect(inSendWindow(at('2026-12-08T12:00:00-05:00'))).toBe(false);
    // A Sunday → Monday 7:00 Bogotá = 12:00 UTC; the window ends 19:00 = 00:00 UTC the next day.
    expect(nextSendWindow(at('2026-12-06T10:00:00-05:00'))).toEqual({ start: at('2026-12-07T12:00:00Z'), end: at('2026-12-08T00:00:00Z') });
    // Monday 7 December 19:30 → Tuesday 8 is a holiday → Wednesday 9 December 7:00.
    expect(nextSendWindow(at('2026-12-07T19:30:00-05:00')).start).toEqual(at('2026-12-09T07:00:00-05:00'));
    // Saturday 16 January 2027 15:30 → Sunday → Monday 18 January 7:00 (no holiday that Monday).
    expect(nextSendWindow(at('2027-01-16T15:30:00-05:00')).start).toEqual(at('2027-01-18T07:00:00-05:00'));
    // Saturday 9 January 2027 16:00 → Sunday → Monday 11 January is Reyes (moved) → Tuesday 12 January 7:00.
    expect(nextSendWindow(at('2027-01-09T16:00:00-05:00')).start).toEqual(at('2027-01-12T07:00:00-05:00'));
    // Thursday 9 July 2026 is a working day; Monday 13 July (Chiquinquirá, moved) is not → Tuesday 14 July 7:00.
    expect(inSendWindow(at('2026-07-09T12:00:00-05:00'))).toBe(true);
    expect(nextSendWindow(at('2026-07-11T16:00:00-05:00')).start).toEqual(at('2026-07-14T07:00:00-05:00'));
    // Inside a window: answered as given.
    expect(nextSendWindow(at('2026-12-07T10:15:00-05:00')).start).toEqual(at('2026-12-07T10:15:00-05:00'));
  });
});
