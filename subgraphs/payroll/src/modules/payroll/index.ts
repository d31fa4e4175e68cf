import { defineModule } from '@cuadra/shared';
import { payrollDatesLane } from './agenda.ts';
import { epayrollDocuments, epayrollSettings } from './epayroll.ts';
import { epayrollCertificates } from './epayroll_certificate.ts';
import { payrollJournal, payrollJournalSinceSource, payrollJournalSource } from './journal_feed.ts';
import { payslipMailings } from './mail.ts';
import { novelties } from './novelties.ts';
import { payrollRuns } from './runs.ts';
import { noveltiesSource, parametersSource, payrollRunsSource, payslipsSource } from './sources.ts';
import { approve } from './tools/approve.ts';
import { noveltiesCreate } from './tools/novelties_create.ts';
import { noveltiesDelete } from './tools/novelties_delete.ts';
import { noveltiesList } from './tools/novelties_list.ts';
import { parameters } from './tools/parameters.ts';
import { payslip } from './tools/payslip.ts';
import { einvoiceSubmit } from './tools/einvoice_submit.ts';
import { uploadCertificate } from './tools/upload_certificate.ts';
import { einvoiceAdjust, epayrollNotes } from './tools/einvoice_adjust.ts';
import { epayrollConfigure } from './tools/epayroll_configure.ts';
import { employerConfigure } from './tools/employer_configure.ts';
import { sendPayslips } from './tools/send_payslips.ts';
import { post } from './tools/post.ts';
import { run } from './tools/run.ts';
import { voidRun } from './tools/void.ts';

/**
 * Payroll proper (DOMAIN.md, Colombian payroll): the parameters by year, the calculation engine
 * (calc.ts), novelties captured per employee with their dates, and runs
 * (`computed → approved → posted`, or `void`) with their payslips and journal entry.
 */
export const payrollModule = defineModule({
  name: 'payroll',
  tools: [parameters, noveltiesCreate, noveltiesList, noveltiesDelete, run, approve, post, voidRun, payslip, sendPayslips, employerConfigure, epayrollConfigure, einvoiceSubmit, uploadCertificate, einvoiceAdjust],
  models: [novelties, payrollRuns, payslipMailings, epayrollSettings, epayrollDocuments, payrollJournal, epayrollCertificates, epayrollNotes],
  listed: [{ model: novelties }, { model: payrollRuns }, { model: payrollJournal }],
  reads: {
    sources: { payroll_parameters: parametersSource, payroll_runs: payrollRunsSource, payslips: payslipsSource, payroll_novelties: noveltiesSource },
    // Read by finance through the graph only (ARCHITECTURE.md, "Payroll postings"); not a §2.5 source.
    feeds: { payroll_journal: payrollJournalSource, payroll_journal_since: payrollJournalSinceSource },
    agenda: { recurring: payrollDatesLane },
  },
});
