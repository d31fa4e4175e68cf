import { newId, type Governance } from '@cuadra/shared';

/** Name of the policy an agent-opened workspace starts with; the owner deletes or relaxes it. */
export const AGENT_HOLD_POLICY = 'Retener las acciones del agente para el dueño';

/**
 * The defaults of a workspace an agent opened (CONTRACT.md §3–4): every non-read call made by an
 * agent is held (202) for the owner until the owner relaxes the policies. Idempotent: a second
 * call does not add a second policy.
 */
export async function createAgentWorkspaceDefaults(governance: Governance, workspace: string): Promise<void> {
  const existing = await governance.policies.list(workspace);
  if (existing.some((p) => p.name === AGENT_HOLD_POLICY)) return;
  await governance.policies.create(workspace, {
    name: AGENT_HOLD_POLICY,
    priority: 1000,
    match: { actors: ['agent'], risk: ['write', 'external', 'destructive'] },
    conditions: {},
    effect: 'hold',
  }, newId('pol'));
}
