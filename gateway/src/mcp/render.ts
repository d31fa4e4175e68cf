import type { CuadraError } from '@cuadra/shared';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { InvokeResult } from '../pipeline.ts';

/**
 * The pipeline's answer as an MCP tool result (CONTRACT.md §7): the invoke `output` as
 * `structuredContent`; a held call as a normal result `{status: "pending_approval", approval_id}`;
 * a dry run as its body `{tool, dry_run: {decision, would}}`.
 * The same JSON goes in a text block for clients that read only `content`.
 */
export function renderAnswer(result: InvokeResult): CallToolResult {
  if (result.status === 202) {
    const body = result.body as { approval_id: string };
    const held = { status: 'pending_approval', approval_id: body.approval_id };
    return { content: [{ type: 'text', text: JSON.stringify(held) }], structuredContent: held };
  }
  // A dry run (`_meta["io.cuadra/dry-run"]`): REST's body as it is — the tool, the decision, what it would do.
  if ('dry_run' in result.body) return { content: [{ type: 'text', text: JSON.stringify(result.body) }], structuredContent: { ...result.body } };
  const output = (result.body as { output: Record<string, unknown> }).output;
  return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
}

/** A refusal as an MCP tool error: `isError: true` with the contract's `{code, error, field?}` body. */
export function renderRefusal(error: CuadraError): CallToolResult {
  const body = error.toBody();
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: { ...body } };
}
