import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport, type Server } from '@modelcontextprotocol/server';

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  /** The credential that opened the session: only it may use the session id. */
  credentialId: string;
  lastSeen: number;
  /** Order of last use (a counter: several uses may share a millisecond). */
  lastUse: number;
}

/**
 * Sessions of protocol revision 2025-11-25 (`initialize`, `Mcp-Session-Id`). Kept in this
 * process: a deployment with several gateways routes a session's requests to the gateway that
 * opened it (sticky by `Mcp-Session-Id`), or its clients use the stateless 2026-07-28 revision.
 * A session belongs to the credential that opened it; an idle one is closed after `idleMs`;
 * one credential keeps at most `perCredential`, the process at most `total` (the least recently
 * used is closed first).
 */
export class McpSessions {
  readonly #sessions = new Map<string, Session>();
  #uses = 0;
  readonly #idleMs: number;
  readonly #perCredential: number;
  readonly #total: number;
  readonly #sweeper: NodeJS.Timeout;

  constructor(options: { idleMs?: number; perCredential?: number; total?: number } = {}) {
    this.#idleMs = options.idleMs ?? 30 * 60_000;
    this.#perCredential = options.perCredential ?? 16;
    this.#total = options.total ?? 10_000;
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(this.#idleMs, 60_000));
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  /**
   * A transport for an `initialize` request, connected to a fresh server. The session is
   * registered only once the SDK has accepted the handshake and minted its id.
   */
  async open(credentialId: string, server: Server): Promise<WebStandardStreamableHTTPServerTransport> {
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.#evictOldest(credentialId);
        this.#sessions.set(id, { transport, server, credentialId, lastSeen: Date.now(), lastUse: ++this.#uses });
      },
      onsessionclosed: (id) => void this.close(id),
    });
    await server.connect(transport);
    return transport;
  }

  /** The session `id` if it exists and belongs to this credential (else undefined: answered 404). */
  find(id: string, credentialId: string): WebStandardStreamableHTTPServerTransport | undefined {
    const session = this.#sessions.get(id);
    if (!session || session.credentialId !== credentialId) return undefined;
    session.lastSeen = Date.now();
    session.lastUse = ++this.#uses;
    return session.transport;
  }

  async close(id: string): Promise<void> {
    const session = this.#sessions.get(id);
    if (!session) return;
    this.#sessions.delete(id);
    await session.server.close().catch(() => {});
  }

  async closeAll(): Promise<void> {
    clearInterval(this.#sweeper);
    await Promise.all([...this.#sessions.keys()].map((id) => this.close(id)));
  }

  /** Makes room for one more session of this credential. */
  #evictOldest(credentialId: string): void {
    const byAge = [...this.#sessions.entries()].sort((a, b) => a[1].lastUse - b[1].lastUse);
    const own = byAge.filter(([, s]) => s.credentialId === credentialId);
    const evict = new Set(own.slice(0, Math.max(0, own.length - this.#perCredential + 1)).map(([id]) => id));
    for (const [id] of byAge) {
      if (this.#sessions.size - evict.size < this.#total) break;
      evict.add(id);
    }
    for (const id of evict) void this.close(id);
  }

  #sweep(): void {
    const cutoff = Date.now() - this.#idleMs;
    for (const [id, s] of this.#sessions) if (s.lastSeen < cutoff) void this.close(id);
  }
}
