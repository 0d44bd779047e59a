/** The MCP runtime of hosted `mcp` tools: the SDK session, the URL guard, the filters, the servers of a request. */
export { McpSession, isStale, preloadMcpSdk, timedOut, type CallResult, type ListedTool, type McpTarget } from "./session.js";
export { checkServerUrl, isInternalAddress } from "./guard.js";
export { isAllowed, needsApproval, type AllowedTools, type RequireApproval } from "./filters.js";
export { operatorServer, resolveServer, type McpConfig, type McpServerSpec } from "./servers.js";
export { probeMcpServers, type McpProbe } from "./probe.js";
export { McpSessionPool } from "./pool.js";
