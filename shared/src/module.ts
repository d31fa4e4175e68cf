import type { Connection, Model } from 'mongoose';
import type { ListedSeries } from './paging.ts';
import { compositeField, compositeGuard, readRoutesOf, type LaneReader, type ModuleReads, type OwnedReaders } from './composite.ts';
import type { ReadDeclarations } from './reads.ts';
import { READ_KINDS } from './reads.ts';
import type { SystemEvents } from './events.ts';
import type { MailQuota } from './governance/mail-quota.ts';
import type { Logger } from './logger.ts';
import type { PeerConfig } from './peers.ts';
import type { Tool } from './tool.ts';

/**
 * Work a module does on its own on a timer (reminders due, …), in every running instance of its
 * service: `run` must be safe when two instances run it at once (claim each piece of work by a
 * conditional write). Tests call the module's function directly instead of waiting for the timer.
 */
export interface BackgroundJob {
  name: string;
  everyMs: number;
  /** `peers`: the other subgraphs this one may read (service assertions), as the tools' `graph` reads them. */
  run(db: Connection, now: Date, log: Logger, peers?: PeerConfig): Promise<void>;
}

/**
 * What a module's maintenance hook is given: its subgraph's database, the sweep's clock and log,
 * and the one platform capability background work has — recording its module's own domain events
 * on the ledger (shared/src/events.ts), as the system; never a tool call.
 */
export interface MaintenanceContext {
  db: Connection;
  now: Date;
  log: Logger;
  events: SystemEvents;
  /** The workspaces' daily mail quota, for a hook that sends e-mail (the sweep passes it). */
  mailQuota?: MailQuota;
}

/**
 * A module's share of its subgraph's background sweep: finishes what a dead process left (a
 * half-applied change, a stuck payment) across workspaces, so reads never have to. Runs in every
 * pass of the owner's sweep; it reads only small marker collections when all is well.
 * @returns how many things it repaired
 */
export type MaintenanceHook = (ctx: MaintenanceContext) => Promise<number>;

/** A graph field's or entity's read guard: the tool module whose read reach it needs, fixed or per call. */
export type ReadGuard = string | ((args: any) => string);

/**
 * One business module, declared once (CONVENTIONS.md): its tools, the collections it owns, which
 * of them page as lists, the composite reads (records sources, metrics, agenda lanes) it answers,
 * and the read guards of its graph fields. A subgraph is the sum of its modules' manifests
 * ({@link fromModules}); the build writes the tools and reads into the catalog.
 */
export interface ModuleManifest {
  /** The tool module (DOMAIN.md): every tool is named `<name>.<verb>`. */
  name: string;
  tools: readonly Tool<any, any>[];
  /** Accessors of the collections this module owns; indexes are built before the subgraph serves. */
  models?: readonly ((db: Connection) => Model<any>)[];
  /** Collections that page by position (CONTRACT §9 bounded lists). */
  listed?: readonly ListedSeries[];
  /** Records sources, metrics and agenda lanes this module answers: one reader each, and its parts of other modules' lanes (composite.ts). */
  reads?: ModuleReads;
  /** Graph root fields (`Query.<field>`) and entities of this module, with their read guard. */
  readGuards?: Record<string, ReadGuard>;
  /** Its background work (see {@link BackgroundJob}). */
  background?: readonly BackgroundJob[];
  /**
   * The journal source kinds this module posts to its subgraph's books (`invoice`, `bill_payment`,
   * `payroll`…): the list is open, each kind declared by the one module that writes it, and the
   * books refuse a posting of a kind no module declared.
   */
  journalSources?: readonly string[];
  /** Repairs of this module's crash leftovers, run by the owner's background sweep (never by a read). */
  maintenance?: MaintenanceHook;
}

/** Declares a module, refusing (at start-up and in the build) a tool that is not named after it. */
export function defineModule<M extends ModuleManifest>(manifest: M): M {
  for (const tool of manifest.tools) {
    if (!tool.name.startsWith(`${manifest.name}.`)) throw new Error(`The tool ${tool.name} is not in the module ${manifest.name}.`);
  }
  return manifest;
}

/** What a subgraph derives from its modules' manifests. */
export interface OwnedModules {
  /** Built modules, then the modules DOMAIN.md assigns to the subgraph that are not built yet. */
  modules: readonly string[];
  tools: readonly Tool<any, any>[];
  models: readonly ((db: Connection) => Model<any>)[];
  listed: readonly ListedSeries[];
  /** The composite readers, with their owning module; the shared graph fields serve them. */
  readers: OwnedReaders;
  /** Their routes for the catalog: the field of this subgraph and the module of each. */
  reads: ReadDeclarations;
  /** Read guards of the modules' own graph fields and of the shared composite fields. */
  readGuards: Record<string, ReadGuard>;
  /** The modules' background work. */
  background: readonly BackgroundJob[];
  /** The journal source kinds the modules declared, each by one module. */
  journalSources: readonly string[];
  /** The modules' maintenance hooks, in the modules' order. */
  maintenanceHooks: readonly { module: string; run: MaintenanceHook }[];
}

/**
 * Sums a subgraph's manifests. `planned` names modules the subgraph owns (DOMAIN.md) with no
 * manifest yet, so their names are reserved; a module declared twice, a model or a read or a
 * guard claimed by two modules fails here, at start-up and in the build.
 */
export function fromModules(subgraph: string, manifests: readonly ModuleManifest[], planned: readonly string[] = []): OwnedModules {
  const names = new Set<string>();
  const models = new Set<(db: Connection) => Model<any>>();
  const readers: OwnedReaders = { sources: {}, metrics: {}, agenda: {}, boards: {} };
  const readGuards: Record<string, ReadGuard> = {};
  const parts: { lane: string; module: string; read: LaneReader }[] = [];
  const journalSources = new Map<string, string>();
  for (const m of manifests) {
    if (names.has(m.name)) throw new Error(`The module ${m.name} is declared twice.`);
    names.add(m.name);
    for (const model of m.models ?? []) models.add(model);
    for (const kind of READ_KINDS) {
      for (const [key, read] of Object.entries(m.reads?.[kind] ?? {})) {
        if (Object.hasOwn(readers[kind], key)) throw new Error(`The ${kind} "${key}" is declared by two modules.`);
        if (typeof read !== 'function') throw new Error(`The ${kind} "${key}" of the module ${m.name} is not a reader function.`);
        (readers[kind] as Record<string, { module: string; read: unknown }>)[key] = { module: m.name, read };
      }
    }
    for (const [key, read] of Object.entries(m.reads?.feeds ?? {})) {
      if (Object.hasOwn(readers.sources, key)) throw new Error(`The sources "${key}" is declared by two modules.`);
      if (typeof read !== 'function') throw new Error(`The feed "${key}" of the module ${m.name} is not a reader function.`);
      readers.sources[key] = { module: m.name, read, feed: true };
    }
    for (const [key, read] of Object.entries(m.reads?.agendaParts ?? {})) {
      if (typeof read !== 'function') throw new Error(`The agenda part "${key}" of the module ${m.name} is not a reader function.`);
      parts.push({ lane: key, module: m.name, read });
    }
    for (const kind of m.journalSources ?? []) {
      if (journalSources.has(kind)) throw new Error(`The journal source kind "${kind}" is declared by two modules (${journalSources.get(kind)} and ${m.name}).`);
      journalSources.set(kind, m.name);
    }
    for (const [key, guard] of Object.entries(m.readGuards ?? {})) {
      if (key in readGuards) throw new Error(`The read guard of ${key} is declared by two modules.`);
      readGuards[key] = guard;
    }
  }
  // A lane's parts join its owner whatever the modules' order; the owner's module guards the lane.
  for (const part of parts) {
    const owner = Object.hasOwn(readers.agenda, part.lane) ? readers.agenda[part.lane] : undefined;
    if (!owner) throw new Error(`The module ${part.module} adds to the agenda lane "${part.lane}", which no module of ${subgraph} answers.`);
    if (owner.module === part.module || owner.parts?.some((p) => p.module === part.module)) throw new Error(`The module ${part.module} answers the agenda lane "${part.lane}" twice.`);
    owner.parts = [...(owner.parts ?? []), { module: part.module, read: part.read }];
  }
  const first = manifests[0]?.name ?? subgraph;
  for (const kind of READ_KINDS) {
    if (Object.keys(readers[kind]).length) readGuards[`Query.${compositeField(subgraph, kind)}`] = compositeGuard(readers, kind, first);
  }
  return {
    modules: [...names, ...planned.filter((p) => !names.has(p))],
    tools: manifests.flatMap((m) => m.tools),
    models: [...models],
    listed: manifests.flatMap((m) => m.listed ?? []),
    readers,
    reads: readRoutesOf(subgraph, readers),
    readGuards,
    background: manifests.flatMap((m) => m.background ?? []),
    journalSources: [...journalSources.keys()],
    maintenanceHooks: manifests.flatMap((m) => (m.maintenance ? [{ module: m.name, run: m.maintenance }] : [])),
  };
}

