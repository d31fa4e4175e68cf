import { CuadraError, defineTool, ID_SCHEMA, type ToolContext } from '@cuadra/shared';
import type { EmployeeDoc } from '../../employees/model.ts';
import { employees } from '../../employees/model.ts';
import { AUTHORITY_ANSWER_SCHEMA, type AuthorityAnswer } from '@cuadra/shared/dian';
import { buildNominaIndividual, consecutiveFor, epayrollDocuments, openedEpayrollSettings, type EpayrollDocumentDoc, type EpayrollSettingsDoc } from '../epayroll.ts';
import { signingKey, signPayrollXml } from '../epayroll_certificate.ts';
import { issuerLookup, sandboxAnswer, type EpayrollIssuerLookup } from '../epayroll_sandbox.ts';
import { payrollRuns, type RunDoc } from '../runs.ts';

const DOCUMENT_VIEW = {
  type: 'object', additionalProperties: false,
  required: ['id', 'employee_id', 'month', 'number', 'cune', 'status', 'authority', 'endpoint', 'xml', 'submitted_at', 'already_accepted'],
  properties: {
    id: { type: 'string' }, employee_id: { type: 'string' }, month: { type: 'string' }, number: { type: 'string' }, cune: { type: 'string' },
    status: { enum: ['accepted', 'rejected'] }, authority: AUTHORITY_ANSWER_SCHEMA,
    endpoint: { type: 'string' }, xml: { type: 'string' }, submitted_at: { type: 'string' }, already_accepted: { type: 'boolean' },
  },
} as const;

/** Where documents go: `PAYROLL_EPAYROLL_ENDPOINT` (answering AUTHORITY_ANSWER_SCHEMA as JSON), else the built-in sandbox. */
export const SANDBOX = 'builtin-sandbox (Cuadra; not DIAN)';

export async function submitTo(xml: string, lookup: EpayrollIssuerLookup): Promise<{ endpoint: string; answer: AuthorityAnswer }> {
  const url = process.env.PAYROLL_EPAYROLL_ENDPOINT;
  if (!url) return { endpoint: SANDBOX, answer: await sandboxAnswer(xml, lookup) };
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/xml; charset=utf-8' }, body: xml, signal: AbortSignal.timeout(30_000) });
  } catch (err) {
    throw new CuadraError('outcome_unknown', `The payroll endpoint ${url} did not answer; submit again (the same document and number are sent).`, { cause: err });
  }
  if (!res.ok) throw new CuadraError('outcome_unknown', `The payroll endpoint ${url} answered HTTP ${res.status}; submit again.`);
  return { endpoint: url, answer: (await res.json()) as AuthorityAnswer };
}

function view(d: EpayrollDocumentDoc, alreadyAccepted: boolean) {
  return {
    id: d._id, employee_id: d.employee_id, month: d.month, number: d.number, cune: d.cune, status: d.status, authority: d.authority,
    endpoint: d.endpoint ?? SANDBOX, xml: d.xml, submitted_at: d.submitted_at.toISOString(), already_accepted: alreadyAccepted,
  };
}

/** The month's posted runs that paid the employee (the whole month posted: a monthly run, or both halves), or a refusal. */
export async function postedRunsPaying(ctx: Pick<ToolContext, 'db' | 'workspace'>, employee: Pick<EmployeeDoc, '_id' | 'name'>, month: string): Promise<RunDoc[]> {
  // A workspace has a few runs a month: the month's runs are read whole.
  const runs = (await payrollRuns(ctx.db).find({ workspace: ctx.workspace, month }).lean()).filter((r) => r.status !== 'void');
  const pending = runs.find((r) => r.status !== 'posted');
  if (pending) throw new CuadraError('conflict', `The ${pending.frequency} run of ${month} is ${pending.status}; the payroll document is built from posted runs only.`);
  if (runs.some((r) => r.frequency === 'monthly') && runs.some((r) => r.frequency !== 'monthly')) {
    throw new CuadraError('conflict', `${month} has both a monthly run and half-month runs; void the ones that overlap before the payroll document is built.`);
  }
  const covered = runs.some((r) => r.frequency === 'monthly') || (runs.some((r) => r.frequency === 'first_half') && runs.some((r) => r.frequency === 'second_half'));
  if (!covered) throw new CuadraError('conflict', `The payroll of ${month} is not posted for the whole month (a monthly run, or both halves).`);
  const paid = runs.filter((r) => r.payslips.some((p) => p.employee_id === employee._id));
  if (!paid.length) throw new CuadraError('not_found', `${employee.name} was not paid in the runs of ${month}.`);
  return paid;
}

/**
 * Builds one employee's Nómina Individual for a month from the month's posted runs and submits
 * it. The number is taken once per employee and month: a rejected document is rebuilt and sent
 * again with the same number; an accepted one is answered from the record, never sent twice.
 */
export const einvoiceSubmit = defineTool({
  name: 'payroll.einvoice_submit',
  description: 'Build and submit the electronic payroll support document (Nómina Individual, DIAN Resolución 000013 de 2021, TipoXML 102) of one employee for one month (YYYY-MM), from the month\'s posted runs (a monthly run, or both halves). Its CUNE is SHA-384 of NumNE+FecNE+HorNE+ValDev+ValDed+ValTolNE+NitNE+DocEmp+TipoXML+SoftwarePin+TipAmb. Submitted to PAYROLL_EPAYROLL_ENDPOINT or, unset, to the built-in sandbox that validates like DIAN\'s habilitación environment. An accepted document is answered again, never resubmitted. Needs payroll.epayroll_configure first.',
  risk: 'external',
  input: {
    type: 'object', additionalProperties: false, required: ['employee_id', 'month'],
    properties: { employee_id: ID_SCHEMA, month: { type: 'string', pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$' } },
  } as const,
  output: { type: 'object', additionalProperties: false, required: ['document'], properties: { document: DOCUMENT_VIEW } } as const,
  async handler(input, ctx) {
    const { settings, employee } = await settingsAndEmployee(ctx, input.employee_id);
    const docs = epayrollDocuments(ctx.db);
    const id = `${ctx.workspace}:${employee._id}:${input.month}`;
    const existing = await docs.findOne({ _id: id, workspace: ctx.workspace }).lean();
    if (existing?.status === 'accepted') return { document: view(existing, true) };

    const paid = await postedRunsPaying(ctx, employee, input.month);

    const consecutive = await consecutiveFor(ctx.db, ctx.workspace, settings, existing);
    // Signed with the employer's certificate when it uploaded one (payroll.upload_certificate).
    const key = await signingKey(ctx.db, ctx.workspace, ctx.now);
    const built = buildNominaIndividual({ runs: paid, employee, settings, consecutive, now: ctx.now, signed: !!key });
    const xml = key ? signPayrollXml(built.xml, key, ctx.now) : built.xml;
    const { endpoint, answer } = await submitTo(xml, issuerLookup(ctx.db, ctx.workspace, settings));
    const doc: EpayrollDocumentDoc = {
      _id: id, workspace: ctx.workspace, employee_id: employee._id, month: input.month, number: built.number, cune: built.cune, xml,
      status: answer.is_valid ? 'accepted' : 'rejected', authority: answer, endpoint, submitted_at: ctx.now,
    };
    // Never overwrite an accepted document (a concurrent submission may have won).
    const saved = await docs.findOneAndUpdate({ _id: id, workspace: ctx.workspace, status: { $ne: 'accepted' } }, { $set: doc }, { upsert: true, returnDocument: 'after' }).lean()
      .catch((err: { code?: number }) => { if (err.code === 11000) return null; throw err; });
    if (!saved) {
      const winner = await docs.findOne({ _id: id, workspace: ctx.workspace }).lean();
      return { document: view(winner!, true) };
    }
    return { document: view(saved, false) };
  },
});

/** What a payroll document is made from: the workspace's e-payroll set-up (PIN opened) and the employee; `conflict` / `not_found` without them. */
export async function settingsAndEmployee(ctx: Pick<ToolContext, 'db' | 'workspace'>, employeeId: string): Promise<{ settings: EpayrollSettingsDoc; employee: EmployeeDoc }> {
  const settings = await openedEpayrollSettings(ctx.db, ctx.workspace);
  if (!settings) throw new CuadraError('conflict', 'Electronic payroll is not configured for this workspace: set the employer\'s NIT and software with payroll.epayroll_configure first.');
  const employee = await employees(ctx.db).findOne({ _id: employeeId, workspace: ctx.workspace }).lean();
  if (!employee) throw new CuadraError('not_found', `No employee ${employeeId} exists in this workspace.`);
  return { settings, employee };
}
