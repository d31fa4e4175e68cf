// The deployment files' per-subgraph parts come from the one list of subgraphs
// (gateway/src/subgraphs.ts): docker-compose.yml's services, their addresses and the gateway's
// dependencies, and gateway/Dockerfile's workspace manifests. Each part sits between
// `# >>> subgraphs: <part>` and `# <<< subgraphs: <part>`; `node scripts/deploy-files.ts` rewrites
// them, and a test (test/deploy-files.test.ts) fails when a file is not what this writes.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SUBGRAPHS } from '../gateway/src/subgraphs.ts';
import { repoRoot } from './infra.ts';

type Subgraph = { name: string };

/** The generated parts of each deployment file, by part name. */
export function generatedParts(subgraphs: readonly Subgraph[] = SUBGRAPHS): Record<string, Record<string, string[]>> {
  const urls = (indent: string) => subgraphs.map((s) => `${indent}SUBGRAPH_${s.name.toUpperCase()}_URL: http://${s.name}:4000`);
  return {
    'docker-compose.yml': {
      'peer urls': urls('    '),
      services: subgraphs.flatMap((s, i) => [
        ...(i > 0 ? [''] : []),
        `  ${s.name}:`,
        '    <<: *subgraph',
        `    build: { context: ., dockerfile: subgraphs/Dockerfile, args: { SUBGRAPH: ${s.name} } }`,
        `    environment: { <<: *subgraph-env, MONGO_DB: cuadra_${s.name} }`,
      ]),
      'gateway depends on': subgraphs.map((s) => `      ${s.name}: { condition: service_started }`),
      'gateway urls': urls('      '),
    },
    'gateway/Dockerfile': {
      manifests: subgraphs.map((s) => `COPY subgraphs/${s.name}/package.json subgraphs/${s.name}/`),
    },
  };
}

/** `text` with each marked part replaced by its generated lines; a missing marker is an error. */
export function fillParts(file: string, text: string, parts: Record<string, string[]>): string {
  let out = text;
  for (const [part, lines] of Object.entries(parts)) {
    const begin = `# >>> subgraphs: ${part}`;
    const end = `# <<< subgraphs: ${part}`;
    const re = new RegExp(`^([ \\t]*)${begin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[^\\n]*\\n[\\s\\S]*?^[ \\t]*${end.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[^\\n]*$`, 'm');
    const match = re.exec(out);
    if (!match) throw new Error(`${file}: the markers "${begin}" … "${end}" are missing.`);
    const indent = match[1];
    out = out.slice(0, match.index) + `${indent}${begin} (generated: node scripts/deploy-files.ts)\n${lines.join('\n')}${lines.length ? '\n' : ''}${indent}${end}` + out.slice(match.index + match[0].length);
  }
  return out;
}

/** Each deployment file as it should be: `{file: [current, expected]}`. */
export function deployFiles(root = repoRoot): Record<string, [string, string]> {
  const out: Record<string, [string, string]> = {};
  for (const [file, parts] of Object.entries(generatedParts())) {
    const current = readFileSync(path.join(root, file), 'utf8');
    out[file] = [current, fillParts(file, current, parts)];
  }
  return out;
}

if (import.meta.main) {
  for (const [file, [current, expected]] of Object.entries(deployFiles())) {
    if (current !== expected) writeFileSync(path.join(repoRoot, file), expected);
    console.log(`${file}: ${current === expected ? 'up to date' : 'rewritten'}`);
  }
}
