import { modelOn, onceInRead, sealerFromEnv, type ReadContext, type Sealer } from '@cuadra/shared';
import { dianSecrets } from '@cuadra/shared/dian';
import { Schema, type Connection, type Model } from 'mongoose';

/** A DIAN numbering range (resolución de facturación): prefix and consecutive bounds. */
export interface NumberingRange {
  prefix: string;
  from: number;
  to: number;
  resolution: string | null;
  /** The resolution's validity (sts:AuthorizationPeriod); absent on ranges set up before it was kept. */
  valid_from?: string | null;
  valid_to: string | null;
}

/** A fiscal address of the issuer: DANE's municipality code (its department follows from it). */
export interface IssuerAddress {
  line: string;
  municipality_code: string | null;
  postal_code: string | null;
  country: string;
}

/**
 * The issuer as DIAN's documents name it (AccountingSupplierParty): its NIT, trade name and, once
 * given, what Anexo Técnico 1.9 requires of it — RUT name, person type, fiscal responsibilities
 * (TaxLevelCode), tax (TaxScheme), fiscal address with DANE codes, contact. Set-ups made before
 * these were kept have only `nit`, `check_digit` and `name`.
 */
export interface IssuerProfile {
  nit: string;
  check_digit: number;
  name: string;
  legal_name?: string | null;
  person_type?: 'legal' | 'natural';
  responsibilities?: string[];
  tax_scheme?: string;
  address?: IssuerAddress | null;
  email?: string | null;
  phone?: string | null;
}

/**
 * A workspace's e-invoicing set-up as the code uses it: who issues (NIT), the software registered
 * with the authority (id, PIN), the range's technical key (ClTec) and the numbering ranges.
 * `_id` is the workspace id: one set-up per workspace. It is stored as a {@link StoredSettingsDoc}
 * (the two secrets sealed) and opened with {@link openSettings}.
 */
export interface SettingsDoc {
  _id: string;
  issuer: IssuerProfile;
  /** TipoAmbiente: `1` production, `2` test (habilitación). */
  environment: '1' | '2';
  technical_key: string;
  software_id: string;
  software_pin: string;
  /** The workspace's base currency: metrics are reported in it. */
  currency: string;
  /**
   * Who made the software (the graphic representation names them, Resolución 000165 de 2023, and
   * sts:ProviderID carries their NIT); absent: the issuer's own software.
   */
  software_maker?: { name: string; nit: string; check_digit: number } | null;
  /** The software's name, printed on the representation. */
  software_name?: string | null;
  /** The means of payment an invoice states unless it names its own (DIAN list 13.3.4.2; 1 = not defined). */
  payment_means?: string | null;
  /** `debit_note` is absent from set-ups made before debit notes existed: {@link rangeOf} gives its default. */
  numbering: { invoice: NumberingRange; credit_note: NumberingRange; debit_note?: NumberingRange };
  updated_at: Date;
}

/** The set-up without its secrets: all a rendering for people needs. */
export type VisibleSettings = Omit<SettingsDoc, 'technical_key' | 'software_pin'>;

/**
 * The set-up as stored: the technical key and the software PIN only sealed (CONTRACT.md §9), each
 * with a context naming the workspace and the field. Documents written before sealing hold them in
 * plain `technical_key`/`software_pin`: still read, and sealed at start-up by {@link sealPlainSettings}
 * (or by the next einvoicing.configure, which writes only the sealed form).
 */
export type StoredSettingsDoc = VisibleSettings & {
  technical_key_sealed?: string;
  software_pin_sealed?: string;
  /** Before sealing: the plain values. */
  technical_key?: string;
  software_pin?: string;
};

const settingsSchema = new Schema<StoredSettingsDoc>(
  {
    _id: { type: String, required: true },
    issuer: { type: Schema.Types.Mixed, required: true },
    environment: { type: String, required: true },
    technical_key_sealed: String,
    technical_key: String,
    software_id: { type: String, required: true },
    software_pin_sealed: String,
    software_pin: String,
    currency: { type: String, required: true },
    software_maker: { type: Schema.Types.Mixed, default: null },
    software_name: { type: String, default: null },
    payment_means: { type: String, default: null },
    numbering: { type: Schema.Types.Mixed, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
settingsSchema.index({ software_id: 1 });

/** The e-invoicing settings collection (secrets sealed: read them through {@link openSettings}). */
export function settings(db: Connection): Model<StoredSettingsDoc> {
  return modelOn<StoredSettingsDoc>(db, 'EinvoicingSettings', settingsSchema, 'einvoicing_settings');
}

/** The two secrets, sealed at rest as every DIAN set-up's are (`einvoicing.<secret>:<workspace>`, @cuadra/shared/dian). */
const SECRETS = dianSecrets({ service: 'einvoicing', label: 'e-invoicing', secrets: ['technical_key', 'software_pin'], collection: 'einvoicing_settings', configureTool: 'einvoicing.configure' });

/** The sealer, or a refusal: without a sealing key the secrets cannot be kept safely, so they are not kept at all. */
export const requireSettingsSealer = SECRETS.requireSealer;

/** The two secrets sealed for storing (the fields {@link StoredSettingsDoc} keeps). */
export const sealSettingsSecrets = SECRETS.seal;

/** Are the secrets set (sealed or, before sealing, plain)? Never opens them. */
export const secretsSet = SECRETS.present;

/**
 * A stored set-up with its secrets opened (a plain one, written before sealing, as it is). A box
 * that does not open (the sealing key changed) is a `conflict`: the CUFE computed without it would
 * only be refused by the authority.
 */
export function openSettings(doc: StoredSettingsDoc, sealer: Sealer | null = sealerFromEnv()): SettingsDoc {
  return SECRETS.open(doc, sealer) as SettingsDoc;
}

/**
 * What Anexo Técnico 1.9 requires of the issuer that the set-up does not hold yet (set-ups made
 * before it kept them): the fiscal address with the DANE municipality (FAJ07, FAJ08). The other
 * fields have a value DIAN accepts by default (RUT name = name, R-99-PN, IVA, persona jurídica).
 */
export function issuerGaps(s: Pick<SettingsDoc, 'issuer'>): string[] {
  return s.issuer.address?.municipality_code ? [] : ['fiscal address (issuer.address with the DANE municipality code)'];
}

/** Who made the software (sts:ProviderID, the representation): the maker set up, else the issuer itself (its own software). */
export function softwareMaker(s: Pick<SettingsDoc, 'software_maker' | 'issuer'>): { name: string; nit: string; check_digit: number } {
  return s.software_maker ?? { name: s.issuer.name, nit: s.issuer.nit, check_digit: s.issuer.check_digit };
}

/** The workspace's set-up with its secrets opened, or null when it has none. */
export async function openedSettings(db: Connection, workspace: string): Promise<SettingsDoc | null> {
  const doc = await settings(db).findById(workspace).lean();
  return doc ? openSettings(doc) : null;
}

/**
 * Seals the secrets of set-ups written before sealing (plain `technical_key`/`software_pin`) at
 * start-up (or the next einvoicing.configure does). The number of documents sealed.
 */
export const sealPlainSettings = SECRETS.sealPlain;

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
