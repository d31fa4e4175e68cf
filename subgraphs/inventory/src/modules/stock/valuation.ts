/**
 * Valuation of one item in one warehouse (NIIF para pymes §13.17–13.18: FIFO or weighted average
 * cost; LIFO is not allowed; §13.19: carried at the lower of cost and estimated selling price
 * less costs to complete and sell). Pure functions over a balance's state: the stock ledger
 * (ledger.ts) applies them when a movement is written, and again, movement by movement, when a
 * backdated one revalues what follows it.
 *
 * Units: quantities are integer millionths of the item's unit (CONTRACT §9: up to 6 decimals,
 * arithmetic exact); values are integer minor units. A share of a value is `value × part ÷
 * whole`, computed in BigInt and rounded half away from zero; taking the whole quantity takes the
 * whole value, so no residue of a cent is ever left behind in a balance that is empty.
 */

/** Cost formula of an item (§13.18). */
export type ValuationMethod = 'average' | 'fifo';

/** A FIFO cost layer: what is left of one receipt (oldest first). */
export interface Layer { qty: number; value: number }

/** What a balance holds at a point of its ledger. */
export interface StockState {
  /** On hand, in millionths of a unit (negative only for an item that allows it). */
  qty: number;
  /** Carrying amount (cost less any write-down to net realisable value), minor units. */
  value: number;
  /** FIFO layers (empty for the weighted average). Their sums are `qty` and `value`. */
  layers: Layer[];
  /** The write-down to NRV still held in the allowance (PUC 1499), released as the goods leave. */
  allowance: number;
  /** The last receipt's quantity and value: the cost of goods taken beyond what is on hand. */
  last_in: Layer | null;
}

/** The empty state of a balance that has seen no movement. */
export const EMPTY_STATE: StockState = { qty: 0, value: 0, layers: [], allowance: 0, last_in: null };

/** Micro-units in one unit. */
export const QTY_SCALE = 1_000_000;

/** A quantity given in units (≤ 6 decimals) as integer millionths. */
export function toMicro(quantity: number): number {
  return Math.round(quantity * QTY_SCALE);
}

/** Integer millionths as units. */
export function fromMicro(micro: number): number {
  return micro / QTY_SCALE;
}

/** `value × part ÷ whole`, exact, rounded half away from zero. */
export function share(value: number, part: number, whole: number): number {
  if (whole === 0) return 0;
  const n = BigInt(value) * BigInt(part);
  const d = BigInt(whole);
  const sign = (n < 0n) !== (d < 0n) ? -1n : 1n;
  const an = n < 0n ? -n : n;
  const ad = d < 0n ? -d : d;
  const q = (an * 2n + ad) / (ad * 2n);
  return Number(sign * q);
}

/** What one movement did to a balance. */
export interface Applied {
  state: StockState;
  /** Signed change of the carrying amount (receipt +, delivery −). */
  value: number;
  /** For goods leaving: the write-down released from the allowance with them. */
  released: number;
}

/** Goods coming in at `value` (a receipt, a transfer in, a count surplus). */
export function takeIn(state: StockState, method: ValuationMethod, qty: number, value: number): Applied {
  const next: StockState = { ...state, layers: state.layers.map((l) => ({ ...l })), qty: state.qty + qty, value: state.value + value, last_in: qty > 0 ? { qty, value } : state.last_in };
  if (method === 'fifo') {
    const first = next.layers[0];
    // Goods taken beyond what was on hand (an item that allows negative stock) are settled first.
    if (first && first.qty < 0) next.layers[0] = { qty: first.qty + qty, value: first.value + value };
    else next.layers.push({ qty, value });
    next.layers = next.layers.filter((l) => l.qty !== 0 || l.value !== 0);
  }
  return { state: next, value, released: 0 };
}

/**
 * Goods leaving (a delivery, a transfer out, a count shortage): their cost by the method, and the
 * share of the write-down allowance they take with them. Beyond what is on hand (only for an
 * item that allows negative stock), at the last receipt's unit cost.
 */
export function takeOut(state: StockState, method: ValuationMethod, qty: number): Applied {
  const next: StockState = { ...state, layers: state.layers.map((l) => ({ ...l })) };
  const onHand = Math.max(state.qty, 0);
  const fromStock = Math.min(qty, onHand);
  const beyond = qty - fromStock;
  let cost = 0;
  if (method === 'average') {
    cost = fromStock === state.qty ? state.value : share(state.value, fromStock, state.qty);
  } else {
    let left = fromStock;
    while (left > 0 && next.layers.length && next.layers[0]!.qty > 0) {
      const layer = next.layers[0]!;
      if (layer.qty <= left) {
        cost += layer.value;
        left -= layer.qty;
        next.layers.shift();
      } else {
        const part = share(layer.value, left, layer.qty);
        cost += part;
        next.layers[0] = { qty: layer.qty - left, value: layer.value - part };
        left = 0;
      }
    }
  }
  let beyondCost = 0;
  if (beyond > 0) {
    beyondCost = state.last_in ? share(state.last_in.value, beyond, state.last_in.qty) : 0;
    if (method === 'fifo') {
      const first = next.layers[0];
      if (first && first.qty < 0) next.layers[0] = { qty: first.qty - beyond, value: first.value - beyondCost };
      else next.layers.unshift({ qty: -beyond, value: -beyondCost });
    }
  }
  const released = fromStock === 0 || state.allowance === 0 ? 0 : fromStock === onHand ? state.allowance : share(state.allowance, fromStock, onHand);
  next.qty = state.qty - qty;
  next.value = state.value - cost - beyondCost;
  next.allowance = state.allowance - released;
  return { state: next, value: -(cost + beyondCost), released };
}

/**
 * Goods going back to their vendor (a purchase return; the vendor's credit note takes `price`, its
 * lines' net amount at the bill's prices, off 1435 in finance). As ERPNext values a purchase return
 * (the return's outgoing rate is the receipt's incoming rate: its moving average removes them at that
 * rate, its FIFO queue removes them from the bin of that rate), and as NIIF para pymes §13.6 has it
 * (the cost of purchase is the price less what the vendor gives back), the return undoes the purchase:
 * - weighted average: the goods leave at `price` less their share of the write-down allowance, so the
 *   goods that stay keep the average they would have had without that purchase; all that is on hand
 *   takes the whole carrying amount, and never more than it (a balance is never worth less than zero);
 * - FIFO: from the layer the receipt left, when one still holds the goods at that unit cost (within
 *   the rounding of a share) and nothing is written down; otherwise, the receipt's goods being gone,
 *   first in first out.
 * Beyond what is on hand (an item allowing negative stock): as any outflow. What `price` and the cost
 * the goods leave at differ by is the ledger's to book (journal.ts: 6135).
 */
export function takeBack(state: StockState, method: ValuationMethod, qty: number, price: number): Applied {
  const onHand = Math.max(state.qty, 0);
  if (qty > onHand || qty === onHand || price < 0) return takeOut(state, method, qty);
  const released = state.allowance === 0 ? 0 : share(state.allowance, qty, onHand);
  let cost: number;
  let layers = state.layers;
  if (method === 'average') {
    cost = Math.min(Math.max(price - released, 0), Math.max(state.value, 0));
  } else {
    // A written-down layer no longer carries its receipt's cost: the return then leaves first in first out.
    const at = state.allowance !== 0 ? -1 : state.layers.findIndex((l) => l.qty >= qty && Math.abs(share(l.value, qty, l.qty) - price) <= 1);
    if (at < 0) return takeOut(state, method, qty);
    const layer = state.layers[at]!;
    cost = layer.qty === qty ? layer.value : share(layer.value, qty, layer.qty);
    layers = state.layers.map((l, i) => (i === at ? { qty: l.qty - qty, value: l.value - cost } : { ...l })).filter((l) => l.qty !== 0 || l.value !== 0);
  }
  return { state: { ...state, layers, qty: state.qty - qty, value: state.value - cost, allowance: state.allowance - released }, value: -cost, released };
}

/**
 * A write-down of the carrying amount to net realisable value (§13.19; qty unchanged): `amount`
 * comes off the value (off each FIFO layer in proportion, the last taking the remainder) and
 * goes into the allowance.
 */
export function writeDown(state: StockState, method: ValuationMethod, amount: number): Applied {
  const next: StockState = { ...state, layers: state.layers.map((l) => ({ ...l })), value: state.value - amount, allowance: state.allowance + amount };
  if (method === 'fifo' && next.layers.length) {
    let left = amount;
    next.layers.forEach((l, i) => {
      const part = i === next.layers.length - 1 ? left : share(amount, l.value, state.value);
      l.value -= part;
      left -= part;
    });
  }
  return { state: next, value: -amount, released: 0 };
}
