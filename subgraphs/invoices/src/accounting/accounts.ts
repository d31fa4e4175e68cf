import { retefuenteAccount } from './withholdings.ts';

/**
 * The accounts of the Colombian PUC (Plan Único de Cuentas) the receivables cycle posts to.
 * Codes are PUC auxiliary accounts; names as the PUC gives them.
 */
export const ACCOUNTS = {
  receivables: { code: '130505', name: 'Clientes nacionales' },
  withholdingIncomeTax: { code: '135515', name: 'Retención en la fuente por cobrar' },
  withholdingVat: { code: '135517', name: 'Impuesto a las ventas retenido' },
  withholdingIca: { code: '135518', name: 'Impuesto de industria y comercio retenido' },
  bank: { code: '111005', name: 'Bancos — moneda nacional' },
  customerAdvances: { code: '280505', name: 'Anticipos y avances recibidos de clientes' },
  revenue: { code: '413595', name: 'Ingresos operacionales — comercio y servicios' },
  /** Interest a customer owes for paying late (debit note concept 1): non-operating financial income, PUC 4210. */
  interestIncome: { code: '421005', name: 'Intereses' },
  salesReturns: { code: '417505', name: 'Devoluciones en ventas' },
  vatPayable: { code: '240805', name: 'IVA por pagar (generado)' },
} as const;

/**
 * The account a withholding the customer made is carried in (an asset: a tax credit): retención en
 * la fuente in the 135515 auxiliary of its concept (13551525 servicios…; accounting/withholdings.ts),
 * or 135515 itself for one recorded before concepts existed; ReteIVA 135517; ReteICA 135518.
 */
export function withholdingAccount(w: { type: 'retefuente' | 'reteiva' | 'reteica'; concept?: string }): { code: string; name: string } {
  if (w.type === 'retefuente') return retefuenteAccount(w.concept, 'receivable', ACCOUNTS.withholdingIncomeTax);
  return w.type === 'reteiva' ? ACCOUNTS.withholdingVat : ACCOUNTS.withholdingIca;
}
