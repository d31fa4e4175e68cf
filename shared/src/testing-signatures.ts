import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import forge from 'node-forge';

/** Tests of signed documents (e-invoicing, e-payroll): a certificate as a CA would hand one out, and xmlsec1 to check what was signed. */

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'cuadra-signatures-'));

/** A self-signed RSA certificate and key in a PKCS#12 file (`org` defaults to Cuadra Demo SAS). */
export function makeP12(opts: { password: string; from?: Date; to?: Date; cn?: string; org?: string }) {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = `01${randomBytes(8).toString('hex')}`;
  cert.validity.notBefore = opts.from ?? new Date(Date.now() - 86_400_000);
  cert.validity.notAfter = opts.to ?? new Date(Date.now() + 365 * 86_400_000);
  const name = [{ name: 'commonName', value: opts.cn ?? 'Cuadra Demo SAS' }, { name: 'organizationName', value: opts.org ?? 'Cuadra Demo SAS' }, { name: 'countryName', value: 'CO' }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.sign(key, forge.md.sha256.create());
  const der = forge.asn1.toDer(forge.pkcs12.toPkcs12Asn1(key, cert, opts.password, { algorithm: '3des' })).getBytes();
  return { base64: Buffer.from(der, 'binary').toString('base64'), certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(key), cert };
}

/** xmlsec1 (Debian's xmlsec1), trusting only the given certificate; the Id attributes XAdES references by. */
export async function xmlsecVerify(xml: string, certPem: string): Promise<{ ok: boolean; output: string }> {
  const tag = randomBytes(4).toString('hex');
  const file = join(dir, `doc-${tag}.xml`);
  const pem = join(dir, `cert-${tag}.pem`);
  writeFileSync(file, xml);
  writeFileSync(pem, certPem);
  try {
    const { stdout, stderr } = await run('xmlsec1', ['--verify', '--trusted-pem', pem,
      '--id-attr:Id', 'http://uri.etsi.org/01903/v1.3.2#:SignedProperties', '--id-attr:Id', 'http://www.w3.org/2000/09/xmldsig#:KeyInfo', file]);
    return { ok: true, output: stdout + stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}
