/**
 * Sessions to the operator's MCP servers (`tools.mcp.servers`) kept open across responses:
 * opening one (initialize, its notification, the transport's own requests) costs more router
 * CPU than a call, and these servers and their credentials are the operator's, not a
 * client's. A client's server (by `server_url`, with the client's credentials) gets a session
 * of its own per response. A session whose transport failed is dropped and opened again on the
 * next use; a reload that changes a server's URL or headers opens a new one.
 */
import { McpSession, type McpTarget } from "./session.js";

export class McpSessionPool {
  private readonly sessions = new Map<string, Promise<McpSession>>();
  private closed = false;

  /** The open session for a target, opening it once (bounded by `timeoutMs`; no request's abort ends a shared session). */
  get(target: McpTarget, timeoutMs: number): Promise<McpSession> {
    const key = keyOf(target);
    let s = this.sessions.get(key);
    if (!s) {
      s = McpSession.open(target, timeoutMs, AbortSignal.timeout(timeoutMs));
      this.sessions.set(key, s);
      // A session that could not be opened is not kept: the next response tries again.
      s.catch(() => this.sessions.get(key) === s && this.sessions.delete(key));
      if (this.closed) void this.close();
    }
    return s;
  }

  /** Forgets (and closes) a session whose transport failed. */
  drop(target: McpTarget, session: McpSession): void {
    const key = keyOf(target);
    const s = this.sessions.get(key);
    if (!s) return;
    void s.then((open) => {
      if (open !== session) return;
      if (this.sessions.get(key) === s) this.sessions.delete(key);
      void open.close();
    }, () => {});
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(all.map((s) => s.then((x) => x.close())));
  }
}

function keyOf(t: McpTarget): string {
  return JSON.stringify([t.label, t.url.href, Object.entries(t.headers).sort(), t.authorization ?? null]);
}
