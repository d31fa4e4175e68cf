import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { TestSubgraph, testPrincipal } from '@cuadra/shared/testing';

/** What payroll's tests share: hiring through the tool, and the independent checkers (xmllint, pdftotext). */

type Principal = ReturnType<typeof testPrincipal>;
const dir = mkdtempSync(join(tmpdir(), 'payroll-test-'));

/**
 * A `hire(owner, overrides)` for one test file: employees.create with `defaults` (a minimum-wage,
 * indefinite contract from 2026-01-01 unless given), a fresh name and document number each time.
 */
export function hirer(payroll: () => TestSubgraph, defaults: Record<string, unknown> = {}) {
  let n = 0;
  return async (owner: Principal, overrides: Record<string, unknown> = {}) => {
    n += 1;
    const r = await payroll().call('employees.create', {
      name: `Persona ${n}`, document: { type: 'CC', number: String(2_000_000_000 + Number.parseInt(randomBytes(4).toString('hex'), 16) % 1_000_000_000) }, position: 'Analista',
      hire_date: '2026-01-01', salary: { amount: 175_090_500, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1, ...defaults, ...overrides,
    }, owner);
    expect(r.ok, JSON.stringify(r)).toBe(true);
    return r.output.employee as { id: string; name: string; term_end: string | null };
  };
}

/** xmllint against an XSD (libxml2, sharing no code with ours): ok, or its complaint. */
export function xmllint(xml: string, xsd: string): { ok: boolean; out: string } {
  const file = join(dir, `lint-${randomBytes(4).toString('hex')}.xml`);
  writeFileSync(file, xml);
  try {
    return { ok: true, out: execFileSync('xmllint', ['--noout', '--schema', xsd, file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (err) {
    return { ok: false, out: String((err as { stderr?: string }).stderr) };
  }
}

/** A PDF (base64) as poppler's pdftotext reads it, laid out. */
export function pdfText(base64: string): string {
  const file = join(dir, `doc-${randomBytes(4).toString('hex')}.pdf`);
  writeFileSync(file, Buffer.from(base64, 'base64'));
  return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
}
