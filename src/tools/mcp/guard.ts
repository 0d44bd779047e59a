/**
 * Which MCP servers a client may make the router call. A client's `server_url` is a request
 * the router makes on its behalf from inside the operator's network, so it must match one of
 * `tools.mcp.allowed_urls`; an address on the loopback, link-local or a private range (what
 * the host resolves to, not only how it is written) is refused unless a pattern names that
 * host literally. The SDK's transports follow only same-origin redirects, so a redirect cannot
 * lead to another (refused) host.
 */
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { invalidRequest } from "../../ops/errors.js";

const INTERNAL = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
] as const) {
  INTERNAL.addSubnet(net, bits, "ipv4");
}
for (const [net, bits] of [
  ["::1", 128],
  ["::", 128],
  ["fc00::", 7],
  ["fe80::", 10],
] as const) {
  INTERNAL.addSubnet(net, bits, "ipv6");
}

/** True for a loopback, link-local, private or unspecified address (IPv4-mapped IPv6 included). */
export function isInternalAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return INTERNAL.check(mapped[1]!, "ipv4");
  const family = isIP(address);
  if (family === 0) return false;
  return INTERNAL.check(address, family === 4 ? "ipv4" : "ipv6");
}

function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\/?]/g, "\\$&").replace(/\*/g, ".*");
  return new RegExp(`^${body}$`, "i");
}

/**
 * Whether a pattern names `host` explicitly: its host part, up to a port or a first `*`, is
 * exactly that host (`http://127.0.0.1:*\/*`, `http://127.0.0.1*`); a wildcard inside or
 * before the host (`http://*.corp/*`, `http://10.*`) names no host.
 */
function namesHost(pattern: string, host: string): boolean {
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/]*)/i.exec(pattern);
  if (!m) return false;
  let part = m[1]!.replace(/:(\d+|\*)$/, "");
  const star = part.indexOf("*");
  if (star === 0) return false;
  if (star > 0) part = part.slice(0, star).replace(/:$/, "");
  try {
    return new URL(`http://${part}`).hostname.replace(/^\[|\]$/g, "").toLowerCase() === host;
  } catch {
    return false;
  }
}

export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Refuses (400 naming `param`) a client `server_url` that no pattern allows, or that reaches
 * an internal address no pattern names explicitly.
 */
export async function checkServerUrl(raw: string, patterns: readonly string[], param: string, resolve: Resolver = systemResolver): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidRequest(`Invalid MCP server_url '${raw}'.`, param, "invalid_value");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalidRequest(`MCP server_url '${raw}' must be an http(s) URL.`, param, "invalid_value");
  const normalised = url.href;
  const matching = patterns.filter((p) => globToRegExp(p).test(normalised) || globToRegExp(p).test(raw));
  if (matching.length === 0) {
    throw invalidRequest(`MCP server_url '${raw}' is not allowed by this router (tools.mcp.allowed_urls).`, param, "mcp_server_not_allowed");
  }
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (matching.some((p) => namesHost(p, host))) return url;
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await resolve(host);
  } catch {
    throw invalidRequest(`MCP server_url '${raw}': the host '${host}' could not be resolved.`, param, "mcp_server_not_allowed");
  }
  if (addresses.some(isInternalAddress)) {
    throw invalidRequest(
      `MCP server_url '${raw}' reaches a loopback, link-local or private address, which the router refuses unless an allowed_urls pattern names the host explicitly.`,
      param,
      "mcp_server_not_allowed",
    );
  }
  return url;
}
