import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../scripts/infra.ts';

/**
 * A temporary copy of the product to build (and run) as a developer's change would leave it: the
 * sources copied into `into`, node_modules linked entry by entry, our own workspaces (relative links,
 * `../../shared`) pointing into the copy, and each workspace's own node_modules (the versions npm kept
 * apart from the root's, e.g. the agents' OpenTelemetry 2) linked where it was. `tests: false` leaves every `test` folder out (a build needs none).
 */
export function copyProduct(into: string, opts: { tests: boolean }): void {
  mkdirSync(into, { recursive: true });
  const skip = opts.tests ? /[\\/](node_modules|generated)$/ : /[\\/](node_modules|generated|test)$/;
  for (const part of ['shared', 'gateway', 'subgraphs', 'scripts', ...(opts.tests ? ['test'] : []), 'package.json', 'tsconfig.json']) {
    cpSync(path.join(repoRoot, part), path.join(into, part), { recursive: true, filter: (src) => !skip.test(src) && !src.includes(`${path.sep}test-output`) });
  }
  const modules = path.join(into, 'node_modules');
  mkdirSync(path.join(modules, '@cuadra'), { recursive: true });
  for (const entry of readdirSync(path.join(repoRoot, 'node_modules'))) {
    if (entry === '@cuadra' || entry === '.bin') continue;
    symlinkSync(path.join(repoRoot, 'node_modules', entry), path.join(modules, entry));
  }
  for (const ws of readdirSync(path.join(repoRoot, 'node_modules', '@cuadra'))) {
    symlinkSync(readlinkSync(path.join(repoRoot, 'node_modules', '@cuadra', ws)), path.join(modules, '@cuadra', ws));
  }
  const { workspaces } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { workspaces: string[] };
  for (const ws of workspaces) {
    const own = path.join(repoRoot, ws, 'node_modules');
    if (existsSync(own)) symlinkSync(own, path.join(into, ws, 'node_modules'));
  }
}
