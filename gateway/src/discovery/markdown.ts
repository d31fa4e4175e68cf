import type { PublicTool } from '../catalog.ts';

/** Where a tool's Markdown page is served (the `.md` twin llmstxt.org asks of each documented page). */
export const toolDocPath = (name: string): string => `/docs/tools/${name}.md`;

/** The first sentence of a description, on one line (a list item's note). */
function summary(description: string): string {
  const line = description.replace(/\s+/g, ' ').trim();
  const end = line.search(/[.;:](\s|$)/);
  const first = end > 0 ? line.slice(0, end + 1) : line;
  return first.length > 240 ? `${first.slice(0, 239)}…` : first;
}

/** A fenced JSON block that no content can close early (the fence is longer than any backtick run inside). */
function jsonBlock(value: unknown): string {
  const text = JSON.stringify(value, null, 2);
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}json\n${text}\n${fence}`;
}

/**
 * `/llms.txt` in the llmstxt.org format: an H1 with the name, a blockquote summary, a paragraph of
 * what a model must know first, then H2 sections of Markdown links — the machine descriptions, and
 * every tool by module, each to its Markdown page.
 */
export function llmsTxt(tools: readonly PublicTool[], publicUrl: string): string {
  const byModule = new Map<string, PublicTool[]>();
  for (const tool of [...tools].sort((a, b) => a.name.localeCompare(b.name))) {
    const list = byModule.get(tool.module) ?? [];
    list.push(tool);
    byModule.set(tool.module, list);
  }
  const sections = [...byModule.keys()].sort().map((module) =>
    `## Tools: ${module}\n\n${byModule.get(module)!.map((t) => `- [${t.name}](${publicUrl}${toolDocPath(t.name)}): ${summary(t.description)}`).join('\n')}`);
  return [
    '# Cuadra',
    '',
    '> A business workspace for small and mid-size companies (Colombia first): invoicing and electronic invoices, books, payroll, CRM and projects. Every capability is a named tool, callable over REST, MCP and GraphQL through one pipeline: authentication, rate limits, scopes and roles, validation, idempotency, the workspace\'s autonomy policies (a call may be held for a person\'s approval) and a hash-chained ledger of every action.',
    '',
    `Call a tool with \`POST ${publicUrl}/v1/tools/{name}:invoke\` (the input as the JSON body, \`Authorization: Bearer <API key or OAuth token>\`), or \`tools/call\` on the MCP server at \`${publicUrl}/mcp\`. Amounts are integers in minor units. A write may answer 202 with an approval id: a person decides, and the call runs then. Send \`Idempotency-Key\` on writes to retry safely. Refusals carry a stable \`code\` and, for bad input, a \`field\` (a JSON Pointer).`,
    '',
    '## Docs',
    '',
    `- [OpenAPI 3.1 description](${publicUrl}/openapi.json): one operation per tool, with its input and output schemas`,
    `- [API catalog](${publicUrl}/.well-known/api-catalog): the APIs (REST, MCP, GraphQL) as an RFC 9727 linkset`,
    `- [OAuth protected resource metadata](${publicUrl}/.well-known/oauth-protected-resource): how to get a token (RFC 9728)`,
    '',
    ...sections.flatMap((s) => [s, '']),
  ].join('\n');
}

/** A tool's documentation as Markdown: what it does, how to call it, its schemas. */
export function toolMarkdown(tool: PublicTool, publicUrl: string): string {
  const a = tool.annotations;
  const traits = [a.readOnlyHint ? 'reads only' : 'writes', a.destructiveHint ? 'destructive' : '', a.idempotentHint ? 'idempotent' : '', a.openWorldHint ? 'reaches outside Cuadra' : ''].filter(Boolean).join(', ');
  return [
    `# ${tool.name}`,
    '',
    `> ${summary(tool.description)}`,
    '',
    tool.description.trim(),
    '',
    `- Module: \`${tool.module}\``,
    `- Risk: \`${tool.risk}\` (${traits})`,
    `- OAuth scope: \`${tool.scope}\``,
    ...(tool.deprecated ? [`- **Deprecated** since ${tool.deprecated.since}${tool.deprecated.sunset ? `, may stop answering after ${tool.deprecated.sunset}` : ''}${tool.deprecated.successor ? `; call [${tool.deprecated.successor}](${publicUrl}${toolDocPath(tool.deprecated.successor)}) instead` : ''}`] : []),
    `- REST: \`POST ${publicUrl}/v1/tools/${tool.name}:invoke\` with the input as the JSON body`,
    `- MCP: \`tools/call\` with \`"name": "${tool.name}"\` at \`${publicUrl}/mcp\``,
    `- OpenAPI: operation \`${tool.name}\` in [openapi.json](${publicUrl}/openapi.json)`,
    '',
    '## Input (JSON Schema)',
    '',
    jsonBlock(tool.input_schema),
    '',
    ...(tool.output_schema ? ['## Output (JSON Schema)', '', jsonBlock(tool.output_schema), ''] : []),
    `More tools: [llms.txt](${publicUrl}/llms.txt)`,
    '',
  ].join('\n');
}
