import type { PeppolFinding, PeppolVerdict } from '../../../scripts/peppol-validator.ts';
import { askTestPool } from '../../../scripts/test-pool.ts';

/** One finding of the official rules: a Schematron assertion (`BR-CO-15`, `PEPPOL-EN16931-R120`) or an XSD error. */
export type Finding = PeppolFinding;

/** What the validator answers for one document. */
export type Verdict = PeppolVerdict;

/**
 * The independent Peppol BIS 3 validator (scripts/peppol-validator: phive with the official
 * UBL 2.1 XSD, CEN EN 16931 and OpenPEPPOL Schematron): one JVM for the whole `npm test` run,
 * started by the test pool on the first file that asks (scripts/test-pool.ts) and answering
 * every file's documents.
 */
export class PeppolValidator {
  rules = '';
  /** Whether the start-up compiled the Schematron of both document types, and how long it took. */
  warmed = false;
  warmUpMs = 0;

  /** Waits until the run's validator is ready (it starts it if no file has yet). */
  static async start(): Promise<PeppolValidator> {
    const ready = await askTestPool<{ rules: string; warmed: boolean; warm_up_ms: number }>('peppol/start');
    const v = new PeppolValidator();
    v.rules = ready.rules;
    v.warmed = ready.warmed;
    v.warmUpMs = ready.warm_up_ms;
    return v;
  }

  /** Validates one document (calls may overlap). */
  async validate(id: string, xml: string): Promise<Verdict> {
    const verdict = await askTestPool<Verdict>('peppol/validate', { id, xml });
    if (verdict.failure) throw new Error(`validator failed on ${id}: ${verdict.failure}`);
    return verdict;
  }

  /** The validator serves the whole run; the pool stops it when the run ends. */
  async stop(): Promise<void> {}
}

/** The errors (fatal findings) of a verdict, as "ID: text" lines for readable assertion messages. */
export function fatal(v: Verdict): string[] {
  return v.errors.filter((e) => e.level === 'error' || e.level === 'fatal_error').map((e) => `${e.id ?? 'XSD'}: ${e.text}`);
}
