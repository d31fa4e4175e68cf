import { nitCheckDigit } from '@cuadra/shared';
import { DEPARTMENTS, FISCAL_RESPONSIBILITIES, municipality, PARTY_TAX_SCHEMES, PAYMENT_MEANS_CODES } from '@cuadra/shared/dian';
import { child, childrenNamed, textOf, type XmlElement } from './xml.ts';

/**
 * The validation rules of DIAN's Anexo Técnico de Factura Electrónica de Venta 1.9 (Resolución
 * 000165 de 2023, §8: the rule tables of Invoice, CreditNote and DebitNote) that apply to the fields
 * Cuadra emits, as the built-in sandbox checks them. Each rule has DIAN's id: the three tables use
 * one numbering — FA… for Invoice, CA… for CreditNote, DA… for DebitNote, then the group letter
 * (B DianExtensions, D header, J issuer, K buyer, N payment means, Q document allowances and
 * charges, S taxes, U totals, V lines, Z items) and the field's number — so a rule is written
 * once with its group and number (`J26`) and takes the document's prefix (FAJ26, CAJ26, DAJ26).
 * A refusal reads as DIAN words it: `Regla: FAJ26, Rechazo: …`.
 *
 * Where the ids come from: a transcription of the Anexo's rule rows with their line numbers
 * (FAD02, FAD05a, FAD05d, FAD06/CAD06/DAD06, FAD09a, FAD09e/CAD09e/DAD09e, FAD15a, FAB05a,
 * FAB10b, FAS04, FAS07, FAU02, FAU04, FAU06, FAU08, FAU14, FAV01, FAZ02), the field ids of the
 * issuer's and buyer's groups as an annotated generator cites them (FAJ02…FAJ44, FAK02…FAK44),
 * and the same numbering for the rest (FAD01, FAD10, FAN02–FAN04, FAU10). ARCHITECTURE.md
 * ("E-invoicing: the sandbox's rules") lists them.
 */

/** The document kinds and their rule prefixes. */
export type DianKind = 'invoice' | 'credit_note' | 'debit_note';
const PREFIX: Record<DianKind, string> = { invoice: 'FA', credit_note: 'CA', debit_note: 'DA' };

/** One refusal: the rule's id and DIAN's wording. */
export interface RuleFinding {
  rule: string;
  message: string;
}

/** DIAN's format of a refusal: `Regla: FAJ26, Rechazo: …`. */
export function findingText(f: RuleFinding): string {
  return `Regla: ${f.rule}, Rechazo: ${f.message}`;
}

/** An amount with exactly two decimals as cents, or null. */
export function cents(el: XmlElement | undefined): number | null {
  const t = textOf(el).trim();
  if (!el || !/^-?\d+\.\d{2}$/.test(t)) return null;
  const [whole, frac] = t.replace('-', '').split('.');
  const v = Number(whole) * 100 + Number(frac);
  return t.startsWith('-') ? -v : v;
}

/** A percentage with up to 6 decimals as parts per million (19.00 → 190000), or null. */
function ppm(text: string): number | null {
  const m = /^(\d{1,3})(?:\.(\d{1,6}))?$/.exec(text.trim());
  return m ? Number(m[1]) * 1_000_000 / 100 + Number((m[2] ?? '').padEnd(6, '0')) / 100 : null;
}

const ISO_4217 = new Set(Intl.supportedValuesOf('currency'));

/**
 * Checks a party of the document (the issuer, J, or the buyer, K) against the rules of its group:
 * AdditionalAccountID (02), its address when present — DANE municipality (08), department (12),
 * country (16) —, PartyTaxScheme's RegistrationName (20), CompanyID (21) with the NIT's check
 * digit (24), TaxLevelCode in list 13.2.6.1 (26), TaxScheme in list 13.2.6.2 (40), and
 * PartyLegalEntity (42) with RegistrationName (43) and the same CompanyID (44). The issuer's
 * address is required (07).
 */
function partyRules(out: RuleFinding[], root: XmlElement, prefix: string, role: 'J' | 'K'): void {
  const r = (n: string, message: string) => out.push({ rule: `${prefix}${role}${n}`, message });
  const wrapper = child(root, role === 'J' ? 'cac:AccountingSupplierParty' : 'cac:AccountingCustomerParty');
  const who = role === 'J' ? 'del emisor' : 'del adquiriente';
  const account = textOf(child(wrapper, 'cbc:AdditionalAccountID')).trim();
  if (account !== '1' && account !== '2') r('02', `El tipo de organización jurídica ${who} (AdditionalAccountID) debe ser 1 (persona jurídica) o 2 (persona natural).`);
  const party = child(wrapper, 'cac:Party');
  const address = child(party, 'cac:PhysicalLocation/cac:Address');
  if (!address && role === 'J') r('07', `No fue informada la dirección ${who} (cac:PhysicalLocation/cac:Address).`);
  const taxScheme = child(party, 'cac:PartyTaxScheme');
  for (const a of [address, child(taxScheme, 'cac:RegistrationAddress')]) {
    if (!a) continue;
    const country = textOf(child(a, 'cac:Country/cbc:IdentificationCode')).trim();
    if (!/^[A-Z]{2}$/.test(country)) r('16', `El país de la dirección ${who} no es un código ISO 3166-1 válido.`);
    if (country === 'CO') {
      const code = textOf(child(a, 'cbc:ID')).trim();
      const m = municipality(code);
      if (!m) r('08', `El código de municipio ${who} (${code || 'vacío'}) no existe en la lista de municipios (DANE).`);
      const dept = textOf(child(a, 'cbc:CountrySubentityCode')).trim();
      if (!DEPARTMENTS[dept] || (m && m.department_code !== dept)) r('12', `El código de departamento ${who} (${dept || 'vacío'}) no corresponde al municipio informado.`);
    }
  }
  if (!taxScheme) {
    r('19', `No fue informado el grupo PartyTaxScheme ${who}.`);
    return;
  }
  if (!textOf(child(taxScheme, 'cbc:RegistrationName')).trim()) r('20', `No fue informado el nombre o razón social ${who} (RegistrationName).`);
  const company = child(taxScheme, 'cbc:CompanyID');
  const id = textOf(company).trim();
  if (!id) r('21', `No fue informado el número de identificación ${who} (CompanyID).`);
  if (company && company.getAttribute('schemeName') === '31') {
    const dv = company.getAttribute('schemeID') ?? '';
    if (!/^\d{5,15}$/.test(id) || dv !== String(nitCheckDigit(id))) r('24', `El dígito de verificación del NIT ${who} no es correcto.`);
  }
  const levels = textOf(child(taxScheme, 'cbc:TaxLevelCode')).trim().split(';').filter(Boolean);
  if (levels.length === 0 || levels.some((l) => !FISCAL_RESPONSIBILITIES[l])) r('26', `Las responsabilidades fiscales ${who} (TaxLevelCode) deben ser de la lista 13.2.6.1 (O-13, O-15, O-23, O-47, R-99-PN).`);
  if (!PARTY_TAX_SCHEMES[textOf(child(taxScheme, 'cac:TaxScheme/cbc:ID')).trim()]) r('40', `El tributo ${who} (TaxScheme/ID) debe ser de la lista 13.2.6.2 (01, 04, ZA, ZZ).`);
  const legal = child(party, 'cac:PartyLegalEntity');
  if (!legal) {
    r('42', `No fue informado el grupo PartyLegalEntity ${who}.`);
    return;
  }
  if (!textOf(child(legal, 'cbc:RegistrationName')).trim()) r('43', `No fue informado el nombre o razón social ${who} en PartyLegalEntity.`);
  if (textOf(child(legal, 'cbc:CompanyID')).trim() !== id) r('44', `El número de identificación ${who} en PartyLegalEntity no corresponde al informado en PartyTaxScheme.`);
}

/**
 * The rules of the fields Cuadra emits that need no outside knowledge (the issuer's keys and the
 * signature are checked by the sandbox, which knows the issuer): the document's structure, parties,
 * payment means, allowances and charges, taxes and totals.
 */
export function documentRules(root: XmlElement, kind: DianKind): RuleFinding[] {
  const out: RuleFinding[] = [];
  const p = PREFIX[kind];
  const r = (id: string, message: string) => out.push({ rule: `${p}${id}`, message });
  const text = (path: string) => textOf(child(root, path)).trim();

  if (text('cbc:UBLVersionID') !== 'UBL 2.1') r('D01', 'UBLVersionID debe ser "UBL 2.1".');
  const customization = text('cbc:CustomizationID');
  const validCustomization = { invoice: ['10', '09', '11'], credit_note: ['20', '22'], debit_note: ['30', '32'] }[kind];
  if (!validCustomization.includes(customization)) r('D02', 'CustomizationID no indica un valor válido para el tipo de operación');
  if (!/^[0-9A-Za-z]+$/.test(text('cbc:ID'))) r(kind === 'invoice' ? 'D05a' : 'D05', 'No se permiten caracteres adicionales como espacios o guiones');
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text('cbc:IssueDate'))) r('D09', 'IssueDate no es una fecha AAAA-MM-DD.');
  if (!/^\d{2}:\d{2}:\d{2}-05:00$/.test(text('cbc:IssueTime'))) r('D10', 'IssueTime debe ser la hora de Colombia con su zona (HH:MM:SS-05:00).');
  if (!ISO_4217.has(text('cbc:DocumentCurrencyCode'))) r('D15a', 'Código de divisa inválido');

  partyRules(out, root, p, 'J');
  partyRules(out, root, p, 'K');

  // Payment means (list 13.3.4): the form, the means, and the due date of a credit sale.
  const means = childrenNamed(root, 'cac:PaymentMeans');
  if (means.length === 0 && kind === 'invoice') r('N01', 'No fue informado el grupo cac:PaymentMeans (forma y medio de pago).');
  for (const m of means) {
    const form = textOf(child(m, 'cbc:ID')).trim();
    if (form !== '1' && form !== '2') r('N02', 'La forma de pago (PaymentMeans/ID) debe ser 1 (contado) o 2 (crédito).');
    if (!PAYMENT_MEANS_CODES.includes(textOf(child(m, 'cbc:PaymentMeansCode')).trim())) r('N03', 'El medio de pago (PaymentMeansCode) no existe en la lista 13.3.4.2.');
    if (form === '2' && !/^\d{4}-\d{2}-\d{2}$/.test(textOf(child(m, 'cbc:PaymentDueDate')).trim())) r('N04', 'Una venta a crédito debe informar la fecha de vencimiento (PaymentDueDate).');
  }

  // Document allowances and charges, and the totals they move (FAU08, FAU10, FAU14).
  const acs = childrenNamed(root, 'cac:AllowanceCharge');
  let allowances = 0;
  let charges = 0;
  for (const a of acs) {
    const amount = cents(child(a, 'cbc:Amount')) ?? 0;
    if (textOf(child(a, 'cbc:ChargeIndicator')).trim() === 'true') charges += amount;
    else allowances += amount;
  }

  const lineTag = { invoice: 'cac:InvoiceLine', credit_note: 'cac:CreditNoteLine', debit_note: 'cac:DebitNoteLine' }[kind];
  const lines = childrenNamed(root, lineTag);
  if (lines.length === 0) r('V01', 'No fue informado el grupo');
  let lineSum = 0;
  let lineBases = 0;
  let lineTaxes = 0;
  let malformed = false;
  for (const l of lines) {
    const ext = cents(child(l, 'cbc:LineExtensionAmount'));
    if (ext === null) malformed = true;
    lineSum += ext ?? 0;
    for (const t of childrenNamed(l, 'cac:TaxTotal')) {
      lineTaxes += cents(child(t, 'cbc:TaxAmount')) ?? 0;
      for (const st of childrenNamed(t, 'cac:TaxSubtotal')) lineBases += cents(child(st, 'cbc:TaxableAmount')) ?? 0;
    }
    if (!textOf(child(l, 'cac:Item/cbc:Description')).trim()) r('Z02', 'Descripción no informada');
  }

  // Taxes: one subtotal per rate (FAS04), each the rate on its base within the rounding of its lines (FAS07).
  for (const total of childrenNamed(root, 'cac:TaxTotal')) {
    const seen = new Set<string>();
    for (const st of childrenNamed(total, 'cac:TaxSubtotal')) {
      const scheme = textOf(child(st, 'cac:TaxCategory/cac:TaxScheme/cbc:ID')).trim();
      const pct = textOf(child(st, 'cac:TaxCategory/cbc:Percent')).trim();
      if (seen.has(`${scheme}:${pct}`)) r('S04', 'Debe ser informado un grupo de estos para cada tarifa.');
      seen.add(`${scheme}:${pct}`);
      const base = cents(child(st, 'cbc:TaxableAmount'));
      const tax = cents(child(st, 'cbc:TaxAmount'));
      const rate = ppm(pct);
      if (base === null || tax === null || rate === null) continue;
      // Each line's tax is rounded on its own: the subtotal may differ from base × rate by half a cent per line.
      const exact = Math.round((base * rate) / 1_000_000);
      if (Math.abs(exact - tax) > Math.max(1, Math.ceil(lines.length / 2))) r('S07', 'El valor del tributo informado no corresponde al producto del porcentaje aplicado sobre la base imponible');
    }
  }

  const totalTag = kind === 'debit_note' ? 'cac:RequestedMonetaryTotal' : 'cac:LegalMonetaryTotal';
  const totals = child(root, totalTag);
  const lineExtension = cents(child(totals, 'cbc:LineExtensionAmount'));
  const taxExclusive = cents(child(totals, 'cbc:TaxExclusiveAmount'));
  const taxInclusive = cents(child(totals, 'cbc:TaxInclusiveAmount'));
  const allowanceTotal = child(totals, 'cbc:AllowanceTotalAmount') ? cents(child(totals, 'cbc:AllowanceTotalAmount')) : 0;
  const chargeTotal = child(totals, 'cbc:ChargeTotalAmount') ? cents(child(totals, 'cbc:ChargeTotalAmount')) : 0;
  const payable = cents(child(totals, 'cbc:PayableAmount'));
  // Any amount of the group given without exactly two decimals is U01, not a sum that fails to match.
  const malformedTotal = ['cbc:TaxExclusiveAmount', 'cbc:TaxInclusiveAmount', 'cbc:AllowanceTotalAmount', 'cbc:ChargeTotalAmount']
    .some((tag) => child(totals, tag) !== undefined && cents(child(totals, tag)) === null);
  if (malformed || malformedTotal || lineExtension === null || payable === null) {
    r('U01', 'Importes del grupo de totales con formato inválido (se esperan dos decimales).');
    return out;
  }
  if (lineExtension !== lineSum) r('U02', 'El Valor Bruto antes de tributos no es igual a la suma de los valores de las líneas de la factura que contienen el valor comercial');
  if (taxExclusive !== lineBases) r('U04', 'Base Imponible es distinto a la suma de los valores de las bases imponibles de todas líneas de detalle.');
  if (taxInclusive !== lineExtension + lineTaxes) r('U06', 'Valor Bruto más tributos es diferente a Valor Bruto de la factura que contienen el valor comercial más la Suma de los Tributos de todas las líneas de detalle.');
  if (allowanceTotal !== allowances) r('U08', 'Total descuentos es diferente de la suma de todos los descuentos aplicados al total de la factura');
  if (chargeTotal !== charges) r('U10', 'Total cargos es diferente de la suma de todos los cargos aplicados al total de la factura');
  if (taxInclusive !== null && allowanceTotal !== null && chargeTotal !== null && payable !== taxInclusive - allowanceTotal + chargeTotal) {
    r('U14', 'Valor a Pagar de Factura es distinto de la Suma de Valor Bruto más tributos - Valor del Descuento Total + Valor del Cargo Total');
  }
  return out;
}

/** The prefix of a kind's rules (FA, CA, DA). */
export function rulePrefix(kind: DianKind): string {
  return PREFIX[kind];
}
