import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

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
