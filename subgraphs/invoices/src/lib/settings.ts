import { modelOn, onceInRead, type ReadContext } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** A DIAN numbering range (resolución de facturación): prefix and consecutive bounds. */
export interface NumberingRange {
  prefix: string;
  from: number;
  to: number;
  resolution: string | null;
  valid_to: string | null;
}

/**
 * A workspace's e-invoicing set-up: who issues (NIT), the software registered with the
 * authority (id, PIN), the range's technical key (ClTec) and the numbering ranges.
 * `_id` is the workspace id: one set-up per workspace.
 */
export interface SettingsDoc {
  _id: string;
  issuer: { nit: string; check_digit: number; name: string };
  /** TipoAmbiente: `1` production, `2` test (habilitación). */
  environment: '1' | '2';
  technical_key: string;
  software_id: string;
  software_pin: string;
  /** The workspace's base currency: metrics are reported in it. */
  currency: string;
  /** `debit_note` is absent from set-ups made before debit notes existed: {@link rangeOf} gives its default. */
  numbering: { invoice: NumberingRange; credit_note: NumberingRange; debit_note?: NumberingRange };
  updated_at: Date;
}

const settingsSchema = new Schema<SettingsDoc>(
  {
    _id: { type: String, required: true },
    issuer: { type: Schema.Types.Mixed, required: true },
    environment: { type: String, required: true },
    technical_key: { type: String, required: true },
    software_id: { type: String, required: true },
    software_pin: { type: String, required: true },
    currency: { type: String, required: true },
    numbering: { type: Schema.Types.Mixed, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
settingsSchema.index({ software_id: 1 });

/** The e-invoicing settings collection. */
export function settings(db: Connection): Model<SettingsDoc> {
  return modelOn<SettingsDoc>(db, 'EinvoicingSettings', settingsSchema, 'einvoicing_settings');
}

/** A consecutive counter of one numbering range. `_id` = `<workspace>:<kind>:<prefix>`. */
export interface CounterDoc {
  _id: string;
  workspace: string;
  /** The next number to hand out. */
  next: number;
}

const counterSchema = new Schema<CounterDoc>(
  { _id: { type: String, required: true }, workspace: { type: String, required: true }, next: { type: Number, required: true } },
  { versionKey: false },
);

/** The numbering counters collection. */
export function counters(db: Connection): Model<CounterDoc> {
  return modelOn<CounterDoc>(db, 'Counter', counterSchema, 'counters');
}

/** The kinds of documents numbered from a range of their own. */
export type NumberedKind = 'invoice' | 'credit_note' | 'debit_note';

/** The range used when a set-up names none for notes: prefix NC / ND, 1 to 999,999,999. */
export function defaultNoteRange(kind: 'credit_note' | 'debit_note'): NumberingRange {
  return { prefix: kind === 'credit_note' ? 'NC' : 'ND', from: 1, to: 999_999_999, resolution: null, valid_to: null };
}

/** The numbering range of a kind of document (a set-up without a debit-note range gets the default). */
export function rangeOf(numbering: SettingsDoc['numbering'], kind: NumberedKind): NumberingRange {
  return kind === 'debit_note' ? (numbering.debit_note ?? defaultNoteRange('debit_note')) : numbering[kind];
}

/** Counter id of a range. */
export function counterId(workspace: string, kind: NumberedKind, prefix: string): string {
  return `${workspace}:${kind}:${prefix}`;
}

/**
 * The workspace's base currency (COP when it has no set-up), read once per operation when the
 * read has one to share it with (a dashboard's metrics all ask it: shared composite.ts `once`).
 */
export function workspaceCurrency(db: Connection, workspace: string, ctx: Pick<ReadContext, 'once'> = {}): Promise<string> {
  return onceInRead(ctx, 'currency', async () => (await settings(db).findById(workspace, { currency: 1 }).lean())?.currency ?? 'COP');
}
