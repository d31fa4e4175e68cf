import { retefuenteAccount } from './withholdings.ts';

/**
 * The PUC accounts the payables cycle posts to (Plan Único de Cuentas, Decreto 2650 de 1993).
 * Checked against a published PUC sub-account table (EliasVega/Ecounts2.5,
 * database/seeders/SubaccountsTableSeeder.php): 220505 Proveedores nacionales, 111005 Bancos —
 * moneda nacional, 236540 Retención en la fuente — compras (kept for withholdings recorded before
 * concepts; retención en la fuente now goes to its concept's 2365 sub-account). 2367 (impuesto a las ventas
 * retenido), 2368 (impuesto de industria y comercio retenido) and 2408 (impuesto sobre las ventas
 * por pagar) are PUC accounts without legal sub-accounts: 236740, 236801 and 240810 (IVA
 * descontable) are the auxiliaries Colombian charts commonly open under them.
 */
export const PAYABLE_ACCOUNTS = {
  payables: { code: '220505', name: 'Proveedores nacionales' },
  deductibleVat: { code: '240810', name: 'IVA descontable' },
  withholdingIncomeTax: { code: '236540', name: 'Retención en la fuente por pagar — compras' },
  withholdingVat: { code: '236740', name: 'ReteIVA por pagar' },
  withholdingIca: { code: '236801', name: 'ReteICA por pagar' },
  bank: { code: '111005', name: 'Bancos — moneda nacional' },
} as const;

/**
 * Accounts a bill line may be charged to: expenses (class 5) or assets bought (class 1). PUC
 * accounts (four digits), as Decreto 2650 names them; `expense` marks what the `expenses` metric counts.
 */
export const BILL_LINE_ACCOUNTS = {
  '5110': { name: 'Honorarios', expense: true },
  '5120': { name: 'Arrendamientos', expense: true },
  '5135': { name: 'Servicios', expense: true },
  '5145': { name: 'Mantenimiento y reparaciones', expense: true },
  '5195': { name: 'Diversos', expense: true },
  '1435': { name: 'Mercancías no fabricadas por la empresa', expense: false },
  '1524': { name: 'Equipo de oficina', expense: false },
  '1528': { name: 'Equipo de computación y comunicación', expense: false },
} as const;

/** Bank accounts a bill payment may leave from (PUC 1110 bancos). */
export const PAYMENT_BANK_ACCOUNTS = { '111005': 'Bancos — moneda nacional', '111010': 'Bancos — moneda extranjera' } as const;

export type BillLineAccount = keyof typeof BILL_LINE_ACCOUNTS;
export const BILL_LINE_ACCOUNT_CODES = Object.keys(BILL_LINE_ACCOUNTS) as BillLineAccount[];

/**
 * The account a withholding the buyer made is owed to the authority in (a liability): retención en
 * la fuente in the 2365 sub-account of its concept (236515 honorarios, 236525 servicios, 236530
 * arrendamientos, 236540 compras…; accounting/withholdings.ts), or 236540 for one recorded before
 * concepts existed; ReteIVA 236740; ReteICA 236801.
 */
export function withholdingPayableAccount(w: { type: 'retefuente' | 'reteiva' | 'reteica'; concept?: string }): { code: string; name: string } {
  if (w.type === 'retefuente') return retefuenteAccount(w.concept, 'payable', PAYABLE_ACCOUNTS.withholdingIncomeTax);
  return w.type === 'reteiva' ? PAYABLE_ACCOUNTS.withholdingVat : PAYABLE_ACCOUNTS.withholdingIca;
}
