import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';

/** One finding of the official rules: a Schematron assertion (`BR-CO-15`, `PEPPOL-EN16931-R120`) or an XSD error. */
export interface Finding {
  level: string;
  id: string | null;
  text: string;
  location: string | null;
  artefact: string;
}

/** What the validator answers for one document. */
export interface Verdict {
  id: string;
  valid: boolean;
  vesid: string;
  artefacts: { type: string; path: string; skipped: boolean; errors: number }[];
  errors: Finding[];
  ms: number;
  failure?: string;
}

/**
 * The independent Peppol BIS 3 validator (scripts/peppol-validator: phive with the official
 * UBL 2.1 XSD, CEN EN 16931 and OpenPEPPOL Schematron), started once as a JVM that validates one
 * document per stdin line. scripts/test.ts builds it and names the jar in CUADRA_PEPPOL_VALIDATOR.
 */
export class PeppolValidator {
  private child!: ChildProcessWithoutNullStreams;
  private waiting: ((line: string) => void)[] = [];
  private stderr = '';
  rules = '';
  /** Whether the start-up compiled the Schematron of both document types, and how long it took. */
  warmed = false;
  warmUpMs = 0;

  static async start(): Promise<PeppolValidator> {
    const jar = process.env.CUADRA_PEPPOL_VALIDATOR;
    if (!jar || !existsSync(jar)) throw new Error('CUADRA_PEPPOL_VALIDATOR names no jar: run the tests through scripts/test.ts (it builds scripts/peppol-validator)');
    const v = new PeppolValidator();
    // C1 only and the serial collector: a short-lived JVM that mostly compiles stylesheets starts faster so.
    v.child = spawn('java', ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xss4m', '-jar', jar, '--serve'], { stdio: ['pipe', 'pipe', 'pipe'] });
    v.child.stderr.on('data', (c: Buffer) => { v.stderr = (v.stderr + c.toString()).slice(-4000); });
    createInterface({ input: v.child.stdout }).on('line', (line) => v.waiting.shift()?.(line));
    const exited = new Promise<never>((_, reject) => v.child.once('exit', (code) => reject(new Error(`validator exited (${code}): ${v.stderr}`))));
    exited.catch(() => undefined);
    const ready = JSON.parse(await Promise.race([v.next(), exited])) as { ready: boolean; rules: string; warmed: boolean; warm_up_ms: number };
    v.rules = ready.rules;
    v.warmed = ready.warmed;
    v.warmUpMs = ready.warm_up_ms;
    return v;
  }

  private next(): Promise<string> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Validates one document (answers come back in order, so calls may overlap). */
  async validate(id: string, xml: string): Promise<Verdict> {
    const answer = this.next();
    this.child.stdin.write(`${id} ${Buffer.from(xml, 'utf8').toString('base64')}\n`);
    const verdict = JSON.parse(await answer) as Verdict;
    if (verdict.failure) throw new Error(`validator failed on ${id}: ${verdict.failure}`);
    return verdict;
  }

  /** Ends the JVM (it also exits when its stdin closes). */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const gone = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end();
    await gone;
  }
}

/** The errors (fatal findings) of a verdict, as "ID: text" lines for readable assertion messages. */
export function fatal(v: Verdict): string[] {
  return v.errors.filter((e) => e.level === 'error' || e.level === 'fatal_error').map((e) => `${e.id ?? 'XSD'}: ${e.text}`);
}
