/** RFC 9727 §4.2: the profile URI a linkset carries to say it is an API catalog. */
export const API_CATALOG_PROFILE = 'https://www.rfc-editor.org/info/rfc9727';
/** Where the catalog lives (RFC 9727 §2, a well-known URI per RFC 8615). */
export const API_CATALOG_PATH = '/.well-known/api-catalog';
/** The media type of the catalog: RFC 9264 §4.2's JSON linkset, with RFC 9727's profile (RFC 9264 §5). */
export const API_CATALOG_TYPE = `application/linkset+json; profile="${API_CATALOG_PROFILE}"`;

/** A target object of RFC 9264 §4.2.3: `href` and its target attributes (`type`, `title`, …). */
export interface LinkTarget { href: string; type?: string; title?: string; hreflang?: string[] }
/** A link context object of RFC 9264 §4.2.2: the `anchor` and, per relation type, an array of targets. */
export type LinkContext = { anchor: string } & { [relation: string]: string | LinkTarget[] };

/** The `Link` header field value pointing at the catalog (RFC 9727 §3, RFC 8288). */
export function apiCatalogLink(publicUrl: string): string {
  return `<${publicUrl}${API_CATALOG_PATH}>; rel="api-catalog"`;
}

/**
 * Cuadra's API catalog (RFC 9727 §4): one link context per API — REST `/v1/tools`, MCP `/mcp`,
 * GraphQL `/graphql` — each with its description (`service-desc`), its documentation for people
 * and models (`service-doc`), its metadata (`service-meta`: OAuth protected-resource metadata,
 * RFC 9728) and its status (`status`), as RFC 9727 §4.1 asks ("hyperlinks to API endpoints …
 * links to the OpenAPI Specification definitions"); the catalog's own context lists the three
 * endpoints as `item`s (RFC 9727 §3.1, RFC 6573). Relation names are IANA-registered (RFC 8631).
 */
export function apiCatalog(publicUrl: string): { linkset: LinkContext[] } {
  const at = (path: string) => `${publicUrl}${path}`;
  const docs: LinkTarget[] = [
    { href: at('/llms.txt'), type: 'text/markdown', title: 'Cuadra for language models: every tool, with a Markdown page each' },
  ];
  const status: LinkTarget[] = [{ href: at('/healthz'), type: 'application/json' }];
  return {
    linkset: [
      {
        anchor: at(API_CATALOG_PATH),
        item: [
          { href: at('/v1/tools'), title: 'Cuadra REST tools API' },
          { href: at('/mcp'), title: 'Cuadra MCP server (Streamable HTTP)' },
          { href: at('/graphql'), title: 'Cuadra composed GraphQL graph' },
        ],
      },
      {
        anchor: at('/v1/tools'),
        'service-desc': [{ href: at('/openapi.json'), type: 'application/vnd.oai.openapi+json;version=3.1', title: 'OpenAPI 3.1 description' }],
        'service-doc': docs,
        'service-meta': [{ href: at('/.well-known/oauth-protected-resource'), type: 'application/json', title: 'OAuth 2.0 protected resource metadata (RFC 9728)' }],
        status,
      },
      {
        anchor: at('/mcp'),
        'service-doc': docs,
        'service-meta': [{ href: at('/.well-known/oauth-protected-resource/mcp'), type: 'application/json', title: 'OAuth 2.0 protected resource metadata (RFC 9728)' }],
        status,
      },
      {
        anchor: at('/graphql'),
        'service-doc': docs,
        'service-meta': [{ href: at('/.well-known/oauth-protected-resource'), type: 'application/json', title: 'OAuth 2.0 protected resource metadata (RFC 9728)' }],
        status,
      },
    ],
  };
}
