import type { ToolDeprecation } from '@cuadra/shared';
import { toolDocPath } from '../discovery/markdown.ts';

/**
 * The headers every answer of a deprecated tool carries:
 * - `Deprecation: @<seconds>` — RFC 9745 §2.1: an RFC 9651 Date (`@` and the Unix time), the moment
 *   the tool is (or will be) deprecated;
 * - `Sunset: <HTTP-date>` — RFC 8594 §3, when a date is decided after which it may stop answering;
 * - `Link` — RFC 9745 §3's `rel="deprecation"` to its documentation, and RFC 5829's
 *   `rel="successor-version"` to the tool to call instead.
 */
export function deprecationHeaders(deprecated: ToolDeprecation, tool: string, publicUrl: string): Record<string, string> {
  const since = Date.parse(deprecated.since);
  const headers: Record<string, string> = { Deprecation: `@${Math.floor(since / 1000)}` };
  if (deprecated.sunset) headers.Sunset = new Date(Date.parse(deprecated.sunset)).toUTCString();
  const links = [`<${publicUrl}${toolDocPath(tool)}>; rel="deprecation"; type="text/markdown"`];
  if (deprecated.successor) links.push(`<${publicUrl}${toolDocPath(deprecated.successor)}>; rel="successor-version"; type="text/markdown"`);
  headers.Link = links.join(', ');
  return headers;
}
