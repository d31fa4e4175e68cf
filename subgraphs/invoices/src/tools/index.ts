import { owned } from '../modules/index.ts';

/** Every tool the invoices subgraph owns: the sum of its modules' manifests (src/modules/). */
export const tools = owned.tools;

/** Tool modules the invoices subgraph owns (DOMAIN.md): built ones first, then those not built yet. */
export const modules = owned.modules;
