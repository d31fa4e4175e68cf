import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import forge from 'node-forge';

export const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'einv-check-'));

/** A file in this test run's temporary folder holding `content`; its path. */
export function tempFile(name: string, content: string | Buffer): string {
  const file = join(dir, `${randomBytes(4).toString('hex')}-${name}`);
  writeFileSync(file, content);
  return file;
}

/** A self-signed RSA certificate and key in a PKCS#12 file, made here as a CA would hand one out. */
export function makeP12(opts: { password: string; from?: Date; to?: Date; cn?: string }) {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = `01${randomBytes(8).toString('hex')}`;
  cert.validity.notBefore = opts.from ?? new Date(Date.now() - 86_400_000);
  cert.validity.notAfter = opts.to ?? new Date(Date.now() + 365 * 86_400_000);
  const name = [{ name: 'commonName', value: opts.cn ?? 'Cuadra Demo SAS' }, { name: 'organizationName', value: 'Cuadra Demo SAS' }, { name: 'countryName', value: 'CO' }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.sign(key, forge.md.sha256.create());
  const der = forge.asn1.toDer(forge.pkcs12.toPkcs12Asn1(key, cert, opts.password, { algorithm: '3des' })).getBytes();
  return { base64: Buffer.from(der, 'binary').toString('base64'), certPem: forge.pki.certificateToPem(cert), cert };
}

/** xmlsec1 (Debian's xmlsec1), trusting only the given certificate; the Id attributes XAdES references by. */
export async function xmlsecVerify(xml: string, certPem: string): Promise<{ ok: boolean; output: string }> {
  const file = tempFile('doc.xml', xml);
  const pem = tempFile('cert.pem', certPem);
  try {
    const { stdout, stderr } = await run('xmlsec1', ['--verify', '--trusted-pem', pem,
      '--id-attr:Id', 'http://uri.etsi.org/01903/v1.3.2#:SignedProperties', '--id-attr:Id', 'http://www.w3.org/2000/09/xmldsig#:KeyInfo', file]);
    return { ok: true, output: stdout + stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

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
