import type { MovementType } from './model.ts';

/** A line of a journal entry on a PUC account: an amount on one side only (the shape finance's books post). */
export interface JournalLine { account: string; name: string; debit: number; credit: number }

/**
 * The PUC accounts inventory posts to (Decreto 2650 de 1993, the chart finance keeps):
 * 1435 mercancías no fabricadas por la empresa; 1499 provisiones (the allowance for the
 * write-down to net realisable value, NIIF para pymes §13.19 / §27.2); 6135 costo de ventas,
 * comercio al por mayor y al por menor; 5199 provisiones (the write-down's expense); 5295
 * diversos (a count shortage); 4250 recuperaciones (a count surplus).
 */
export const ACCOUNTS = {
  inventory: { account: '1435', name: 'Mercancías no fabricadas por la empresa' },
  allowance: { account: '1499', name: 'Provisiones — deterioro de inventarios (valor neto realizable)' },
  costOfSales: { account: '6135', name: 'Costo de ventas — comercio al por mayor y al por menor' },
  writeDownExpense: { account: '5199', name: 'Provisiones — deterioro de inventarios' },
  shortage: { account: '5295', name: 'Diversos — faltantes de inventario' },
  surplus: { account: '4250', name: 'Recuperaciones — sobrantes de inventario' },
} as const;

function dr(a: { account: string; name: string }, amount: number): JournalLine { return { ...a, debit: amount, credit: 0 }; }
function cr(a: { account: string; name: string }, amount: number): JournalLine { return { ...a, debit: 0, credit: amount }; }

/**
 * The journal lines of one movement (empty: it posts nothing). A receipt posts nothing here: the
 * bill that buys the goods charges 1435 in finance (bills' line account). A transfer moves goods
 * within 1435. Goods a credit note returns come back at the cost they left with (1435 / 6135).
 * Goods going back to the vendor book only what the vendor's credit note (Cr 1435 at its price, in
 * finance) and what they carried differ by (`price`: the note line's net amount).
 * Goods leaving as a sale are cost of sales at their carrying amount, and take their
 * share of any write-down out of the allowance; a count or an adjustment books the difference.
 */
export function movementLines(type: MovementType, value: number, released: number, price = 0): JournalLine[] {
  const lines: JournalLine[] = [];
  if (type === 'delivery') {
    if (-value > 0) lines.push(dr(ACCOUNTS.costOfSales, -value));
    if (released > 0) lines.push(dr(ACCOUNTS.allowance, released));
    if (-value + released > 0) lines.push(cr(ACCOUNTS.inventory, -value + released));
  } else if (type === 'return') {
    // Goods a credit note brings back, at the cost they left with: cost of sales undone.
    if (value > 0) lines.push(dr(ACCOUNTS.inventory, value), cr(ACCOUNTS.costOfSales, value));
  } else if (type === 'purchase_return') {
    // The vendor's credit note took `price` off 1435 (finance). The goods left carrying −value and
    // took `released` of the allowance: 1435 must lose −value + released and 1499 `released`. The
    // difference between what the vendor gives back and what the goods carried is cost of sales
    // (6135): the goods of that purchase already sold were costed at its price (Odoo books the same
    // difference to its price-difference account; PUC 6135 is where this chart keeps the cost of goods sold).
    const toStock = price - (-value + released);
    const toCost = price + value;
    if (released > 0) lines.push(dr(ACCOUNTS.allowance, released));
    if (toStock > 0) lines.push(dr(ACCOUNTS.inventory, toStock));
    if (toCost < 0) lines.push(dr(ACCOUNTS.costOfSales, -toCost));
    if (toStock < 0) lines.push(cr(ACCOUNTS.inventory, -toStock));
    if (toCost > 0) lines.push(cr(ACCOUNTS.costOfSales, toCost));
  } else if (type === 'adjustment' || type === 'count') {
    if (value > 0) lines.push(dr(ACCOUNTS.inventory, value), cr(ACCOUNTS.surplus, value));
    if (value < 0) {
      lines.push(dr(ACCOUNTS.shortage, -value));
      if (released > 0) lines.push(dr(ACCOUNTS.allowance, released));
      lines.push(cr(ACCOUNTS.inventory, -value + released));
    }
  } else if (type === 'write_down') {
    if (-value > 0) lines.push(dr(ACCOUNTS.writeDownExpense, -value), cr(ACCOUNTS.allowance, -value));
  }
  return lines;
}

/** Σ new − Σ old by account, as lines on the side of the difference: what restating some movements changes in the books. */
export function differenceLines(before: JournalLine[], after: JournalLine[]): JournalLine[] {
  const net = new Map<string, { name: string; amount: number }>();
  const add = (l: JournalLine, sign: number) => {
    const cur = net.get(l.account) ?? { name: l.name, amount: 0 };
    cur.amount += sign * (l.debit - l.credit);
    net.set(l.account, cur);
  };
  before.forEach((l) => add(l, -1));
  after.forEach((l) => add(l, 1));
  return [...net.entries()].filter(([, v]) => v.amount !== 0).map(([account, v]) => (v.amount > 0 ? { account, name: v.name, debit: v.amount, credit: 0 } : { account, name: v.name, debit: 0, credit: -v.amount }));
}

/** Σ debits = Σ credits. */
export function balanced(lines: readonly JournalLine[]): boolean {
  return lines.reduce((s, l) => s + l.debit - l.credit, 0) === 0;
}
