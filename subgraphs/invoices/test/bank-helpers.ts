import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Principal } from '@cuadra/shared';
import type { TestSubgraph } from '@cuadra/shared/testing';

/** The official camt.053.001.02 XSD the module ships (see ARCHITECTURE.md for where it came from). */
export const CAMT_XSD = fileURLToPath(new URL('../src/modules/bank/xsd/camt.053.001.02.xsd', import.meta.url));

/** Validates an XML text with the xmllint command against an XSD; throws xmllint's complaint. */
export function xmllint(xml: string, xsd = CAMT_XSD): string {
  const dir = mkdtempSync(join(tmpdir(), 'camt-'));
  const file = join(dir, 'statement.xml');
  writeFileSync(file, xml);
  return execFileSync('xmllint', ['--noout', '--schema', xsd, file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** One camt entry as the tests write it. */
export interface CamtEntry { ref: string; amount: string; sign: 'CRDT' | 'DBIT'; date: string; info: string; e2e?: string; status?: 'BOOK' | 'PDNG' }

/** A camt.053.001.02 statement with the entries given, valid against the official XSD. */
export function camt053(options: { id: string; iban: string; currency: string; entries: CamtEntry[] }): string {
  const entries = options.entries.map((e) => `
      <Ntry>
        <Amt Ccy="${options.currency}">${e.amount}</Amt>
        <CdtDbtInd>${e.sign}</CdtDbtInd>
        <Sts>${e.status ?? 'BOOK'}</Sts>
        <BookgDt><Dt>${e.date}</Dt></BookgDt>
        <ValDt><Dt>${e.date}</Dt></ValDt>
        <AcctSvcrRef>${e.ref}</AcctSvcrRef>
        <BkTxCd><Prtry><Cd>TRF</Cd></Prtry></BkTxCd>
        <NtryDtls><TxDtls>${e.e2e ? `<Refs><EndToEndId>${e.e2e}</EndToEndId></Refs>` : ''}<RmtInf><Ustrd>${e.info}</Ustrd></RmtInf></TxDtls></NtryDtls>
      </Ntry>`).join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <BkToCstmrStmt>
    <GrpHdr><MsgId>MSG-${options.id}</MsgId><CreDtTm>2026-11-30T18:00:00</CreDtTm></GrpHdr>
    <Stmt>
      <Id>${options.id}</Id>
      <CreDtTm>2026-11-30T18:00:00</CreDtTm>
      <Acct><Id><IBAN>${options.iban}</IBAN></Id><Ccy>${options.currency}</Ccy></Acct>
      <Bal>
        <Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp>
        <Amt Ccy="${options.currency}">0.00</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd>
        <Dt><Dt>2026-11-01</Dt></Dt>
      </Bal>${entries}
    </Stmt>
  </BkToCstmrStmt>
</Document>
`;
}

/** Creates a bank account; its id. */
export async function bankAccount(sg: TestSubgraph, owner: Principal, input: Record<string, unknown> = {}): Promise<string> {
  const r = await sg.call('bank.create_account', { name: 'Corriente', bank_name: 'Bancolombia', account_number: 'CO12 3456 7890 1234', currency: 'COP', ...input }, owner);
  if (!r.ok) throw new Error(`bank.create_account failed: ${r.code} ${r.message}`);
  return r.output.account.id;
}
