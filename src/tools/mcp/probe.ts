/** `check --probe`: lists the tools of every operator-defined MCP server, or says why it could not. */
import type { RouterConfig } from "../../config/load.js";
import { McpSession } from "./session.js";

export interface McpProbe {
  server: string;
  ok: boolean;
  /** One line: the tools found, or the failure (never the server's headers). */
  detail: string;
}

export async function probeMcpServers(config: RouterConfig, timeoutMs = 10_000): Promise<McpProbe[]> {
  return Promise.all(
    config.tools.mcp.servers.map(async (srv): Promise<McpProbe> => {
      const signal = AbortSignal.timeout(timeoutMs);
      let session: McpSession | null = null;
      try {
        session = await McpSession.open({ label: srv.label, url: new URL(srv.url), headers: srv.headers }, timeoutMs, signal);
        const tools = await session.listTools(timeoutMs, signal);
        return { server: srv.label, ok: true, detail: `${tools.length} tools: ${tools.map((t) => t.name).join(", ") || "(none)"}` };
      } catch (err) {
        return { server: srv.label, ok: false, detail: `tools could not be listed: ${(err as Error).message}` };
      } finally {
        await session?.close();
      }
    }),
  );
}
