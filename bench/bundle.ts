// `bench/start.ts` with BENCH_BUNDLE=1: every service bundled into one folder by rolldown (Vite's
// bundler, already in node_modules), so a start can be measured from a bundle against the same
// services from their sources. A measurement only: the product, `npm start`, compose and the tests
// run the sources (docs/measurements.md, "Bundling the services").
//
// One build of the eight entry points (node_modules parsed once; what two services share is one
// chunk). Dependencies are bundled too (mongoose, the Apollo gateway, express: the module loading a
// start spends most of its time on), except those with native parts (node-llama-cpp, playwright).
// Our own sources read files beside them (`new URL('../schema.graphql', import.meta.url)`, assets,
// generated/): in a bundled module `import.meta.url` is made to name the module's own source file,
// relative to the bundle's folder, so every such read finds what it found before.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { rolldown, type Plugin } from 'rolldown';
import { SUBGRAPHS } from '../gateway/src/subgraphs.ts';
import { repoRoot } from '../scripts/infra.ts';

/** Bundles the gateway and every subgraph into `out` (`<service>.mjs` and their chunks); answers the modules it took in. */
export async function bundleServices(out: string): Promise<{ files: number; modules: number; ms: number }> {
  const started = performance.now();
  const input = Object.fromEntries([
    ['gateway', path.join(repoRoot, 'gateway', 'src', 'index.ts')],
    ...SUBGRAPHS.map(({ name }) => [name, path.join(repoRoot, 'subgraphs', name, 'src', 'index.ts')]),
  ]);
  const fromOut = (file: string) => {
    const relative = path.relative(out, file);
    return relative.startsWith('.') ? relative : `./${relative}`;
  };
  // Every chunk is written to `out` itself (no sub-folders), so one relative path serves each module wherever it lands.
  const ownLocation: Plugin = {
    name: 'own-location',
    transform(code, id) {
      if (!id.startsWith(`${repoRoot}/`) || id.includes('/node_modules/') || !/import\.meta\.(url|dirname)/.test(code)) return null;
      return code
        .replaceAll('import.meta.url', `new URL(${JSON.stringify(fromOut(id))}, import.meta.url).href`)
        .replaceAll('import.meta.dirname', `__bundleDirname(${JSON.stringify(fromOut(path.dirname(id)))}, import.meta.url)`);
    },
  };
  const bundle = await rolldown({
    input,
    platform: 'node',
    external: [/^node-llama-cpp/, /^playwright/, /\.node$/],
    logLevel: 'warn',
    plugins: [ownLocation],
    // One graphql, as in production and the tests (vitest.config.ts): the CommonJS entry for every importer.
    resolve: { conditionNames: ['node', 'require', 'default'], mainFields: ['main'] },
  });
  const written = await bundle.write({
    dir: out,
    format: 'esm',
    entryFileNames: '[name].mjs',
    chunkFileNames: 'chunk-[name]-[hash].mjs',
    banner: "import { fileURLToPath as __bundleFileURLToPath } from 'node:url'; const __bundleDirname = (relative, base) => __bundleFileURLToPath(new URL(relative, base));",
  });
  await bundle.close();
  return { files: written.output.length, modules: new Set(written.output.flatMap((o) => ('moduleIds' in o ? o.moduleIds : []))).size, ms: performance.now() - started };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const out = path.resolve(process.argv[2] ?? path.join(repoRoot, 'test-output', 'bench', 'bundle'));
  const made = await bundleServices(out);
  console.log(`bundled into ${out}: ${made.files} files, ${made.modules} modules, ${made.ms.toFixed(0)} ms`);
}
