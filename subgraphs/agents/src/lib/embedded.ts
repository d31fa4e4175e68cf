import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { CuadraError } from '@cuadra/shared';

/** The embedded model's id wherever a model is named (agents.model, ai_models.test): always there, no record. */
export const EMBEDDED_MODEL_ID = 'embedded';

/** Where `node scripts/model.ts` keeps the GGUF file (`CUADRA_EMBEDDED_MODEL_PATH` overrides). */
export function embeddedModelFile(env: NodeJS.ProcessEnv = process.env): string {
  return env.CUADRA_EMBEDDED_MODEL_PATH ?? path.resolve(import.meta.dirname, '..', '..', '..', '..', '.cache', 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');
}

/**
 * The embedded model's server, started on first use as a child process of this subgraph
 * (`src/embedded/main.ts`), which exits with it. `CUADRA_EMBEDDED_MODEL_URL` names one already
 * running instead (then nothing is started). A start that fails is tried again on the next use.
 */
export class EmbeddedModel {
  #starting: Promise<string> | null = null;
  #child: ChildProcess | null = null;

  /** The OpenAI-compatible base URL (`…/v1`). `unavailable` when the model is not installed or does not start. */
  url(env: NodeJS.ProcessEnv = process.env): Promise<string> {
    if (env.CUADRA_EMBEDDED_MODEL_URL) return Promise.resolve(env.CUADRA_EMBEDDED_MODEL_URL.replace(/\/+$/, ''));
    this.#starting ??= this.#start(env).catch((err) => {
      this.#starting = null;
      throw err;
    });
    return this.#starting;
  }

  async #start(env: NodeJS.ProcessEnv): Promise<string> {
    const file = embeddedModelFile(env);
    if (!existsSync(file)) throw new CuadraError('unavailable', 'The embedded model is not installed here (node scripts/model.ts installs it); nothing was done.', { beforeAnyEffect: true });
    const entry = path.resolve(import.meta.dirname, '..', 'embedded', 'main.ts');
    const child = spawn(process.execPath, [entry], {
      env: { ...env, CUADRA_EMBEDDED_MODEL_PATH: file, CUADRA_EMBEDDED_THREADS: env.CUADRA_EMBEDDED_THREADS ?? '2' },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.#child = child;
    child.once('exit', () => {
      if (this.#child === child) {
        this.#child = null;
        this.#starting = null;
      }
    });
    const lines = createInterface({ input: child.stdout! });
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new CuadraError('unavailable', 'The embedded model did not start within 60 s; nothing was done.', { beforeAnyEffect: true })), 60_000);
      lines.once('line', (line) => {
        clearTimeout(timer);
        try {
          resolve((JSON.parse(line) as { url: string }).url);
        } catch {
          reject(new CuadraError('unavailable', 'The embedded model did not start; nothing was done.', { beforeAnyEffect: true }));
        }
      });
      child.once('exit', () => {
        clearTimeout(timer);
        reject(new CuadraError('unavailable', 'The embedded model stopped while starting; nothing was done.', { beforeAnyEffect: true }));
      });
    });
    return url;
  }

  /** Stops the child, if this process started one. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.stdin?.end();
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
    await exited;
  }
}

/** The one embedded model of this process. */
export const embeddedModel = new EmbeddedModel();
