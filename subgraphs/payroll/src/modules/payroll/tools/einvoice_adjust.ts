import { CuadraError, defineTool, ID_SCHEMA, localDate } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { AUTHORITY_ANSWER_SCHEMA, type AuthorityAnswer } from '@cuadra/shared/dian';
import { buildEliminar, buildNominaIndividual, consecutiveFor, epayrollDocuments, type Predecessor } from '../epayroll.ts';
import { signingKey, signPayrollXml } from '../epayroll_certificate.ts';
import { issuerLookup } from '../epayroll_sandbox.ts';
import { postedRunsPaying, SANDBOX, settingsAndEmployee, submitTo } from './einvoice_submit.ts';

/**
 * Adjustment notes (Nota de Ajuste del Documento Soporte de Pago de Nómina Electrónica, TipoXML
 * 103, Resolución 000013 de 2021): one note per document it adjusts, `_id`
 * `<workspace>:<employee>:<month>:<number adjusted>`. An employee's month is a chain: the accepted
 * Nómina Individual, then each accepted replacing note takes the place of what it replaced; an
 * accepted deleting note ends it.
 */
export interface EpayrollNoteDoc {
  _id: string;
  workspace: string;
  employee_id: string;
  month: string;
  kind: 'replace' | 'delete';
  predecessor: Predecessor;
  number: string;
  cune: string;
  xml: string;
  status: 'accepted' | 'rejected';
  authority: AuthorityAnswer;
  endpoint: string;
  submitted_at: Date;
}

const noteSchema = new Schema<EpayrollNoteDoc>({
  _id: String, workspace: String, employee_id: String, month: String, kind: String, predecessor: Schema.Types.Mixed, number: String, cune: String, xml: String,
  status: String, authority: Schema.Types.Mixed, endpoint: String, submitted_at: Date,
}, { versionKey: false, minimize: false });

export function epayrollNotes(db: Connection): Model<EpayrollNoteDoc> {
  return (db.models.EpayrollNote as Model<EpayrollNoteDoc> | undefined) ?? db.model<EpayrollNoteDoc>('EpayrollNote', noteSchema, 'payroll_epayroll_notes');
}

/** At most this many adjustments of one employee's month are followed (each a lookup by id). */
const MAX_CHAIN = 50;

/** The document in force for the employee's month (what a new note adjusts), or why there is none. */
async function head(db: Connection, workspace: string, employeeId: string, month: string): Promise<Predecessor> {
  const original = await epayrollDocuments(db).findOne({ _id: `${workspace}:${employeeId}:${month}`, workspace }).lean();
  if (!original || original.status !== 'accepted') throw new CuadraError('conflict', `There is no accepted payroll document of ${month} for this employee to adjust; submit it with payroll.einvoice_submit.`);
  let current: Predecessor = { number: original.number, cune: original.cune, date: localDate(original.submitted_at) };
  for (let i = 0; i < MAX_CHAIN; i += 1) {
    const note = await epayrollNotes(db).findOne({ _id: `${workspace}:${employeeId}:${month}:${current.number}`, workspace }).lean();
    if (!note || note.status !== 'accepted') return current;
    if (note.kind === 'delete') throw new CuadraError('conflict', `The payroll document of ${month} for this employee was deleted by note ${note.number}; there is nothing left to adjust.`);
    current = { number: note.number, cune: note.cune, date: localDate(note.submitted_at) };
  }
  throw new CuadraError('conflict', `The payroll document of ${month} has been adjusted ${MAX_CHAIN} times; no more adjustments are taken here.`);
}

const NOTE_VIEW = {
  type: 'object', additionalProperties: false,
  required: ['id', 'employee_id', 'month', 'kind', 'predecessor', 'number', 'cune', 'status', 'authority', 'endpoint', 'xml', 'submitted_at'],
  properties: {
    id: { type: 'string' }, employee_id: { type: 'string' }, month: { type: 'string' }, kind: { enum: ['replace', 'delete'] },
    predecessor: { type: 'object', additionalProperties: false, required: ['number', 'cune', 'date'], properties: { number: { type: 'string' }, cune: { type: 'string' }, date: { type: 'string' } } },
    number: { type: 'string' }, cune: { type: 'string' }, status: { enum: ['accepted', 'rejected'] }, authority: AUTHORITY_ANSWER_SCHEMA,
    endpoint: { type: 'string' }, xml: { type: 'string' }, submitted_at: { type: 'string' },
  },
} as const;

function view(n: EpayrollNoteDoc) {
  return {
    id: n._id, employee_id: n.employee_id, month: n.month, kind: n.kind, predecessor: n.predecessor, number: n.number, cune: n.cune, status: n.status,
    authority: n.authority, endpoint: n.endpoint ?? SANDBOX, xml: n.xml, submitted_at: n.submitted_at.toISOString(),
  };
}

/**
 * Builds and submits an adjustment note for the employee's payroll document of a month: `replace`
 * rebuilds it from the month's posted runs as they are now (after a posted run was voided and run
 * again), `delete` withdraws it. It adjusts the document in force (the last accepted replacement,
 * else the original). A rejected note is rebuilt and sent again with its number.
 */
export const einvoiceAdjust = defineTool({
  name: 'payroll.einvoice_adjust',
  description: 'Build and submit an adjustment note (Nota de Ajuste, TipoXML 103, DIAN Resolución 000013 de 2021) for an employee\'s accepted electronic payroll document of a month (YYYY-MM): kind `replace` (TipoNota 1) rebuilds it from the month\'s posted runs as they are now; kind `delete` (TipoNota 2) withdraws it. It names the document it adjusts (number, CUNE, date), has its own number and CUNE (SHA-384, TipoXML 103; a deletion hashes zero amounts and worker document 0), is signed when a certificate was uploaded, and goes to PAYROLL_EPAYROLL_ENDPOINT or the built-in sandbox. An accepted note is never resubmitted; the next note adjusts it.',
  risk: 'external',
  input: {
    type: 'object', additionalProperties: false, required: ['employee_id', 'month', 'kind'],
    properties: {
      employee_id: ID_SCHEMA, month: { type: 'string', pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$' }, kind: { enum: ['replace', 'delete'] },
      reason: { type: 'string', minLength: 1, maxLength: 500, description: 'Why (written in Notas).' },
    },
  } as const,
  output: { type: 'object', additionalProperties: false, required: ['note'], properties: { note: NOTE_VIEW } } as const,
  async handler(input, ctx) {
    const { settings, employee } = await settingsAndEmployee(ctx, input.employee_id);
    const predecessor = await head(ctx.db, ctx.workspace, employee._id, input.month);
    const paid = input.kind === 'replace' ? await postedRunsPaying(ctx, employee, input.month) : [];
    const notes = epayrollNotes(ctx.db);
    const id = `${ctx.workspace}:${employee._id}:${input.month}:${predecessor.number}`;
    const existing = await notes.findOne({ _id: id, workspace: ctx.workspace }).lean();
    const consecutive = await consecutiveFor(ctx.db, ctx.workspace, settings, existing);
    const key = await signingKey(ctx.db, ctx.workspace, ctx.now);
    const built = input.kind === 'replace'
      ? buildNominaIndividual({ runs: paid, employee, settings, consecutive, now: ctx.now, signed: !!key, replaces: predecessor })
      : buildEliminar({ deletes: predecessor, settings, consecutive, now: ctx.now, reason: input.reason, signed: !!key });
    const xml = key ? signPayrollXml(built.xml, key, ctx.now) : built.xml;
    const { endpoint, answer } = await submitTo(xml, issuerLookup(ctx.db, ctx.workspace, settings));
    const doc: EpayrollNoteDoc = {
      _id: id, workspace: ctx.workspace, employee_id: employee._id, month: input.month, kind: input.kind, predecessor, number: built.number, cune: built.cune, xml,
      status: answer.is_valid ? 'accepted' : 'rejected', authority: answer, endpoint, submitted_at: ctx.now,
    };
    // Never overwrite an accepted note (a concurrent one may have won: it is answered).
    const saved = await notes.findOneAndUpdate({ _id: id, workspace: ctx.workspace, status: { $ne: 'accepted' } }, { $set: doc }, { upsert: true, returnDocument: 'after' }).lean()
      .catch((err: { code?: number }) => { if (err.code === 11000) return null; throw err; });
    return { note: view(saved ?? (await notes.findOne({ _id: id, workspace: ctx.workspace }).lean())!) };
  },
});
