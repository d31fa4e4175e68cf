import type { MessageKey, Translator } from './i18n.ts';

/** What a sentence needs looked up first: parties and documents named by id in a held call's input. */
export interface Wanted {
  parties: Set<string>;
  invoices: Set<string>;
  bills: Set<string>;
}

/** Names found for the ids (a party's name, a document's number); what is missing reads as its id. */
export interface Names {
  parties: Map<string, string>;
  invoices: Map<string, string>;
  bills: Map<string, string>;
}

type Input = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined);
const list = (v: unknown): Input[] => (Array.isArray(v) ? v.filter((x): x is Input => typeof x === 'object' && x !== null) : []);

/** Ids a held call names that its sentence shows by name. */
export function wantedBy(tool: string, input: Input, into: Wanted): void {
  const party = str(input.customer_id) ?? str(input.vendor_id) ?? (tool.startsWith('parties.') ? str(input.id) : undefined);
  if (party) into.parties.add(party);
  for (const a of list(input.invoices)) if (str(a.invoice_id)) into.invoices.add(a.invoice_id as string);
  for (const a of list(input.bills)) if (str(a.bill_id)) into.bills.add(a.bill_id as string);
  if (tool.startsWith('invoices.') && str(input.id)) into.invoices.add(input.id as string);
  if (tool === 'invoices.credit_note' && str(input.invoice_id)) into.invoices.add(input.invoice_id as string);
  if (tool.startsWith('bills.') && str(input.id)) into.bills.add(input.id as string);
}

/** A list in words: "A", "A y B", "A, B y C" (or "and"). */
function joinWords(t: Translator, items: string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  const and = t.locale === 'en' ? 'and' : 'y';
  return `${items.slice(0, -1).join(', ')} ${and} ${items[items.length - 1]}`;
}

/** The main arguments of a call, briefly, for the generic sentence (scalars only, at most four). */
function mainArguments(input: Input): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(input)) {
    if (parts.length >= 4) break;
    if (typeof v === 'string') parts.push(`${k}: ${v.length > 40 ? `${v.slice(0, 39)}…` : v}`);
    else if (typeof v === 'number' || typeof v === 'boolean') parts.push(`${k}: ${v}`);
  }
  return parts.join(', ');
}

/**
 * What a held call wants done, in the person's language: a sentence per common tool, and for any
 * other a generic one naming the tool and its main arguments. The tool name itself is never translated.
 */
export function describeCall(t: Translator, tool: string, input: Input, names: Names): string {
  const party = (id: unknown) => (str(id) ? names.parties.get(id as string) ?? (id as string) : '?');
  const invoice = (id: unknown) => (str(id) ? names.invoices.get(id as string) ?? (id as string) : '?');
  const bill = (id: unknown) => (str(id) ? names.bills.get(id as string) ?? (id as string) : '?');
  const currency = str(input.currency) ?? 'COP';
  const amount = int(input.amount);
  const say = (key: MessageKey, vars: Record<string, string | number>) => t.t(key, vars);
  switch (tool) {
    case 'payments.register': {
      const docs = list(input.invoices).map((a) => invoice(a.invoice_id));
      const vars = { amount: amount !== undefined ? t.money(amount, currency) : '?', party: party(input.customer_id), documents: joinWords(t, docs) };
      return say(docs.length ? 'do.payments.register.against' : 'do.payments.register', vars);
    }
    case 'bills.pay':
      return say('do.bills.pay', { amount: amount !== undefined ? t.money(amount, currency) : '?', party: party(input.vendor_id), documents: joinWords(t, list(input.bills).map((a) => bill(a.bill_id))) });
    case 'parties.create': {
      const kind = str(input.kind);
      const kindKey = kind === 'customer' || kind === 'vendor' || kind === 'both' ? (`do.kind.${kind}` as MessageKey) : 'do.kind.other';
      return say('do.parties.create', { kind: t.t(kindKey), name: str(input.name) ?? '?' });
    }
    case 'parties.update':
      return say('do.parties.update', { party: party(input.id) });
    case 'parties.archive':
      return say('do.parties.archive', { party: party(input.id) });
    case 'invoices.create': {
      const lines = list(input.lines);
      const priced = lines.every((l) => int(l.unit_price) !== undefined && typeof l.quantity === 'number' && Number.isInteger(l.quantity));
      if (lines.length > 0 && priced) {
        // Before taxes: quantity × unit price, summed (what the person typed, not the posted total).
        const sum = lines.reduce((s, l) => s + (l.quantity as number) * (l.unit_price as number), 0);
        if (Number.isSafeInteger(sum)) return say('do.invoices.create', { party: party(input.customer_id), amount: t.money(sum, currency) });
      }
      return say('do.invoices.create.lines', { party: party(input.customer_id), count: lines.length });
    }
    case 'invoices.post':
    case 'invoices.send':
    case 'invoices.update':
      return say(`do.${tool}` as MessageKey, { document: invoice(input.id) });
    case 'invoices.credit_note':
      return say('do.invoices.credit_note', { document: invoice(input.invoice_id ?? input.id) });
    case 'bills.create':
      return say('do.bills.create', { party: party(input.vendor_id) });
    case 'bills.post':
    case 'bills.void':
      return say(`do.${tool}` as MessageKey, { document: bill(input.id) });
    case 'items.create':
      return say('do.items.create', { name: str(input.name) ?? '?' });
    case 'api_keys.create':
      return say('do.api_keys.create', { name: str(input.name) ?? '?', role: str(input.role) ?? '?' });
    case 'api_keys.revoke':
      return say('do.api_keys.revoke', { id: str(input.id) ?? '?' });
    case 'policies.create':
      return say('do.policies.create', { name: str(input.name) ?? '?' });
    case 'policies.delete':
      return say('do.policies.delete', { id: str(input.id) ?? '?' });
    case 'members.invite':
      return say('do.members.invite', { email: str(input.email) ?? '?', role: str(input.role) ?? '?' });
    default: {
      const args = mainArguments(input);
      return args ? say('do.generic.with', { tool, args }) : say('do.generic', { tool });
    }
  }
}
