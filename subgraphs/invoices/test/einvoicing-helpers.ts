import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DOMParser, type Element } from '@xmldom/xmldom';
import { expect } from 'vitest';

export const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'einv-check-'));

/** A file in this test run's temporary folder holding `content`; its path. */
export function tempFile(name: string, content: string | Buffer): string {
  const file = join(dir, `${randomBytes(4).toString('hex')}-${name}`);
  writeFileSync(file, content);
  return file;
}

// Certificates and xmlsec1, shared with payroll's signed-document tests.
export { makeP12, xmlsecVerify } from '@cuadra/shared/testing/signatures';

/** What zbarimg (Debian's zbar-tools) reads from a PNG. */
export async function zbar(png: Buffer): Promise<string> {
  const { stdout } = await run('zbarimg', ['--quiet', '--raw', '-Sbinary', tempFile('qr.png', png)]);
  return stdout.replace(/\n$/, '');
}

/** What pdftotext (Debian's poppler-utils) reads from a PDF. */
export async function pdfText(pdf: Buffer): Promise<string> {
  const { stdout } = await run('pdftotext', ['-layout', tempFile('doc.pdf', pdf), '-']);
  return stdout;
}

/** The official OASIS UBL 2.1 schemas, vendored for the tests (schemas/oasis-ubl-2.1/README.md says from where). */
export const UBL_XSD = fileURLToPath(new URL('./schemas/oasis-ubl-2.1/', import.meta.url));

/** xmllint (libxml2-utils) validating `xml` against the official UBL 2.1 schemas (its root's); never fetches anything. */
export async function xsdCheck(xml: string, root: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run('xmllint', ['--noout', '--nonet', '--schema', `${UBL_XSD}cuadra-ubl-2.1-documents.xsd`, tempFile(`${root}.xml`, xml)]);
    return { ok: true, output: stdout + stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/** Parses with @xmldom/xmldom (not the service's reader), failing on any error. */
export function parse(xml: string): Element {
  const errors: string[] = [];
  const doc = new DOMParser({ onError: (level, msg) => { if (level !== 'warning') errors.push(msg); } }).parseFromString(xml, 'text/xml');
  expect(errors).toEqual([]);
  return doc.documentElement as unknown as Element;
}
