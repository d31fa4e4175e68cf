import { CuadraError, decimalAmount, localDate } from '@cuadra/shared';
import { localTime } from '../../lib/money.ts';
import { XMLBuilder } from 'fast-xml-parser';
import type { BankAccountRef, PaymentRunDoc } from './model.ts';

/**
 * The bank file formats a payment run can be exported in (the `payment_formats` source lists them).
 * `currencies` null: any currency.
 */
export const PAYMENT_FORMATS = [
  {
    id: 'pain.001.001.03', name: 'ISO 20022 customer credit transfer initiation (pain.001.001.03)', standard: 'ISO 20022', media_type: 'application/xml',
    extension: 'xml', currencies: null,
    description: 'One payment information block debiting the workspace\'s account, one credit transfer per bill to the vendor\'s account; accepted by banks that take ISO 20022 files (SEPA and others).',
  },
  {
    id: 'bancolombia_pab', name: 'Bancolombia PAB — pago a proveedores (archivo plano)', standard: 'Bancolombia PAB', media_type: 'text/plain',
    extension: 'txt', currencies: ['COP'],
    description: 'Fixed-width file for Bancolombia\'s Sucursal Virtual Empresas: one control record (type 1, transaction class 220 pago a proveedores) and one detail record (type 6) per bill.',
  },
] as const;

export type PaymentFormatId = (typeof PAYMENT_FORMATS)[number]['id'];
export const PAYMENT_FORMAT_IDS = PAYMENT_FORMATS.map((f) => f.id) as unknown as readonly ['pain.001.001.03', 'bancolombia_pab'];

/** A produced bank file. */
export interface BankFile {
  format: PaymentFormatId;
  filename: string;
  media_type: string;
  content: string;
  /** Number of credit transfers, and their sum as a decimal string (the file's own control figures). */
  transactions: number;
  control_sum: string;
}

/** A credit transfer's parties as the run knows them. */
function payeeOf(run: PaymentRunDoc, vendorId: string): BankAccountRef {
  const payee = run.payees.find((p) => p.vendor_id === vendorId);
  if (!payee) throw new CuadraError('internal', `The run ${run._id} has no account for vendor ${vendorId}.`);
  return payee;
}

/** A file's creation moment, without milliseconds (ISODateTime). */
function createdAt(run: PaymentRunDoc): Date {
  return new Date(run.exported_at ?? run.updated_at);
}

// ---------------------------------------------------------------------------------------------
// ISO 20022 pain.001.001.03

/** Max35Text and friends: ISO 20022 texts are bounded; longer values are cut, never refused at export. */
function text(value: string, max: number): string {
  return value.length > max ? value.slice(0, max) : value;
}

function account(a: BankAccountRef, currency: string) {
  return {
    Id: a.iban ? { IBAN: a.iban } : { Othr: { Id: text(a.account_number, 34) } },
    // ISO 20022 ExternalCashAccountType1Code: CACC current (checking), SVGS savings.
    Tp: { Cd: a.account_type === 'savings' ? 'SVGS' : 'CACC' },
    Ccy: currency,
  };
}

function agent(a: BankAccountRef) {
  if (a.bic) return { FinInstnId: { BIC: a.bic } };
  if (a.bank_code) return { FinInstnId: { ClrSysMmbId: { MmbId: a.bank_code } } };
  // The agent is required for the debtor: "NOTPROVIDED" is what ISO 20022 usage guides put when the bank is implied by the account.
  return { FinInstnId: { Othr: { Id: 'NOTPROVIDED' } } };
}

function organisation(name: string, nit: string | null) {
  return {
    Nm: text(name, 140),
    ...(nit ? { Id: { OrgId: { Othr: { Id: nit, SchmeNm: { Prtry: 'NIT' } } } } } : {}),
  };
}

/**
 * The run as an ISO 20022 `pain.001.001.03` document: GrpHdr (MsgId = the run's id, NbOfTxs,
 * CtrlSum, the workspace as initiating party), one PmtInf (PmtMtd TRF, the requested execution
 * date, the workspace as debtor with its account and bank) and one CdtTrfTxInf per bill (EndToEndId =
 * the bill payment's id, InstdAmt, the vendor's bank, name, NIT and account; Ustrd = the vendor's
 * invoice number). Element order is the schema's; values are escaped by the XML builder.
 */
export function pain001(run: PaymentRunDoc): BankFile {
  const sum = decimalAmount(run.total);
  // The workspace's local time with its offset (`2026-11-23T19:10:00-05:00`): a bare date-time reads as the
  // bank's local time, and a UTC clock without `Z` would move the file five hours.
  const created = `${localDate(createdAt(run))}T${localTime(createdAt(run))}`;
  const transactions = run.lines.map((l) => {
    const payee = payeeOf(run, l.vendor_id);
    return {
      PmtId: { InstrId: text(l.payment_id, 35), EndToEndId: text(l.payment_id, 35) },
      Amt: { InstdAmt: { '@_Ccy': run.currency, '#text': decimalAmount(l.amount) } },
      ...(payee.bic || payee.bank_code ? { CdtrAgt: agent(payee) } : {}),
      Cdtr: organisation(l.vendor_name, l.vendor_tax_id),
      CdtrAcct: account(payee, run.currency),
      RmtInf: { Ustrd: text(`Factura ${l.supplier_number}`, 140) },
    };
  });
  const doc = {
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    Document: {
      '@_xmlns': 'urn:iso:std:iso:20022:tech:xsd:pain.001.001.03',
      CstmrCdtTrfInitn: {
        GrpHdr: {
          MsgId: text(run._id, 35), CreDtTm: created, NbOfTxs: String(run.count), CtrlSum: sum,
          InitgPty: organisation(run.debtor.name, run.debtor.tax_id),
        },
        PmtInf: {
          PmtInfId: text(`${run._id}-1`, 35), PmtMtd: 'TRF', NbOfTxs: String(run.count), CtrlSum: sum,
          ReqdExctnDt: run.payment_date,
          Dbtr: organisation(run.debtor.name, run.debtor.tax_id),
          DbtrAcct: account(run.debtor, run.currency),
          DbtrAgt: agent(run.debtor),
          CdtTrfTxInf: transactions,
        },
      },
    },
  };
  const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', textNodeName: '#text', format: true, suppressEmptyNode: true });
  return {
    format: 'pain.001.001.03', filename: `${run._id}.pain.001.xml`, media_type: 'application/xml', content: builder.build(doc) as string,
    transactions: run.count, control_sum: sum,
  };
}

// ---------------------------------------------------------------------------------------------
// Bancolombia PAB (pago a proveedores), fixed width

/** The PAB record length: every record is padded to it. */
export const PAB_RECORD_LENGTH = 264;

/** Upper-case ASCII (the file is ISO-8859-1; accents folded so one character is one byte). */
function plain(value: string): string {
  return value.normalize('NFD').replace(/\p{M}/gu, '').replace(/[^\x20-\x7E]/g, ' ').toUpperCase();
}

/** Alphanumeric field: left-aligned, space-filled, cut to its width. */
function alpha(value: string, width: number): string {
  return plain(value).slice(0, width).padEnd(width, ' ');
}

/** Numeric field: right-aligned, zero-filled; a value wider than the field is refused, never cut. */
function numeric(value: string, width: number, what: string): string {
  if (!/^\d*$/.test(value) || value.length > width) throw new CuadraError('invalid_input', `${what} (${value}) does not fit the ${width}-digit field of the Bancolombia PAB file.`, { field: '/format' });
  return value.padStart(width, '0');
}

/** An amount as PAB writes it: 15 integer digits and 2 decimals, no separator. */
function pabAmount(cents: number, what: string): string {
  return numeric(String(cents), 17, what);
}

const ymd = (date: string) => date.replaceAll('-', '');

/**
 * The run as a Bancolombia PAB file (records of {@link PAB_RECORD_LENGTH} characters, CRLF).
 * Control record (type 1), 1-based positions: 1 type `1`; 2–16 the workspace's NIT (digits,
 * zero-filled); 17 application `I` (immediate); 18–32 filler; 33–35 transaction class `220`
 * (pago a proveedores); 36–45 purpose; 46–53 transmission date YYYYMMDD; 54–55 sequence of the day
 * `01`; 56–63 application date YYYYMMDD; 64–69 number of detail records; 70–86 Σ debits (zeros);
 * 87–103 Σ credits (15 integers + 2 decimals); 104–114 account debited; 115 its type (S savings,
 * D checking); 116–264 filler.
 * Detail record (type 6) per bill: 1 `6`; 2–16 the vendor's NIT; 17–46 its name; 47–55 the
 * destination bank's code; 56–72 the vendor's account; 73 place of payment `S`; 74–75 transaction
 * type (37 savings credit, 27 checking credit); 76–92 amount (15 + 2); 93–100 application date;
 * 101–121 reference (the vendor's invoice number); 122–264 optional fields left blank.
 * Sources: Oracle's "Formato de pago Bancolombia PAB V 2.0" payment-format mapping (2020) for the
 * control record's fields 1–12, and an open-source Colombian treasury module's PAB generator
 * (simhaonline/cromo, ArchivoPlanoController::generarArchivoBancolombiaPab) for fields 13–14 and the
 * detail record up to position 100. Bancolombia's own specification was not available here.
 */
export function bancolombiaPab(run: PaymentRunDoc): BankFile {
  if (run.currency !== 'COP') throw new CuadraError('invalid_input', `Bancolombia PAB files pay in COP; this run is in ${run.currency}.`, { field: '/format' });
  const transmitted = ymd(localDate(createdAt(run)));
  const applied = ymd(run.payment_date);
  const header = [
    '1', numeric(run.debtor.tax_id, 15, 'The workspace\'s NIT'), 'I', ' '.repeat(15), '220', alpha('PAGO PROV', 10), transmitted, '01', applied,
    numeric(String(run.count), 6, 'The number of payments'), '0'.repeat(17), pabAmount(run.total, 'The run total'),
    numeric(run.debtor.account_number, 11, 'The account debited'), run.debtor.account_type === 'savings' ? 'S' : 'D',
  ].join('');
  const details = run.lines.map((l) => {
    const payee = payeeOf(run, l.vendor_id);
    if (!payee.bank_code) throw new CuadraError('invalid_input', `The account of ${l.vendor_name} has no bank_code; a PAB file names the destination bank by its code.`, { field: '/format' });
    if (!l.vendor_tax_id) throw new CuadraError('invalid_input', `${l.vendor_name} has no NIT in crm; a PAB file names each payee by it.`, { field: '/format' });
    return [
      '6', numeric(l.vendor_tax_id, 15, `The NIT of ${l.vendor_name}`), alpha(l.vendor_name, 30), numeric(payee.bank_code, 9, `The bank code of ${l.vendor_name}`),
      numeric(payee.account_number, 17, `The account of ${l.vendor_name}`), 'S', payee.account_type === 'savings' ? '37' : '27',
      pabAmount(l.amount, `The payment of ${l.supplier_number}`), applied, alpha(l.supplier_number, 21),
    ].join('');
  });
  const records = [header, ...details].map((r) => r.padEnd(PAB_RECORD_LENGTH, ' '));
  return {
    format: 'bancolombia_pab', filename: `${run._id}.pab.txt`, media_type: 'text/plain', content: `${records.join('\r\n')}\r\n`,
    transactions: run.count, control_sum: decimalAmount(run.total),
  };
}

/** The run in the format asked for. */
export function bankFile(run: PaymentRunDoc, format: PaymentFormatId): BankFile {
  return format === 'pain.001.001.03' ? pain001(run) : bancolombiaPab(run);
}
