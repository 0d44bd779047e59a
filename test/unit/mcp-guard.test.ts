import { describe, expect, it } from "vitest";
import { checkServerUrl, isAllowed, isInternalAddress, needsApproval } from "../../src/tools/mcp/index.js";
import { ApiError } from "../../src/ops/errors.js";

const resolveTo = (...addresses: string[]) => async () => addresses;

async function refusal(url: string, patterns: string[], resolve = resolveTo("93.184.216.34")): Promise<ApiError> {
  const err = await checkServerUrl(url, patterns, "tools[0].server_url", resolve).then(() => null, (e: unknown) => e);
  if (!(err instanceof ApiError)) throw new Error(`expected a refusal of ${url}`);
  return err;
}

describe("server_url guard", () => {
  it("knows internal addresses (v4, v6, IPv4-mapped)", () => {
    for (const a of ["127.0.0.1", "10.0.0.5", "172.20.1.1", "192.168.1.1", "169.254.169.254", "0.0.0.0", "::1", "fe80::1", "fd00::2", "::ffff:127.0.0.1", "100.64.0.1"]) expect(isInternalAddress(a)).toBe(true);
    for (const a of ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "172.32.0.1"]) expect(isInternalAddress(a)).toBe(false);
  });

  it("no patterns: every client URL is refused with a 400 naming it", async () => {
    const err = await refusal("https://mcp.example.com/mcp", []);
    expect(err.status).toBe(400);
    expect(err.param).toBe("tools[0].server_url");
    expect(err.message).toContain("https://mcp.example.com/mcp");
  });

  it("a matching public host is allowed; a wildcard host that resolves inside is refused", async () => {
    await expect(checkServerUrl("https://mcp.example.com/mcp", ["https://mcp.example.com/*"], "p", resolveTo("93.184.216.34"))).resolves.toBeInstanceOf(URL);
    const err = await refusal("https://evil.example.com/mcp", ["https://*.example.com/*"], resolveTo("10.0.0.7"));
    expect(err.message).toContain("private");
    // one internal address among several is enough to refuse (DNS can answer either)
    await refusal("https://multi.example.com/mcp", ["https://*"], resolveTo("93.184.216.34", "127.0.0.1"));
  });

  it("an internal host named literally by a pattern is allowed (any port wildcard)", async () => {
    await expect(checkServerUrl("http://127.0.0.1:9000/mcp", ["http://127.0.0.1:*/*"], "p", resolveTo())).resolves.toBeInstanceOf(URL);
    await expect(checkServerUrl("http://10.0.0.5:9000/mcp", ["http://10.0.0.5:9000/mcp"], "p", resolveTo())).resolves.toBeInstanceOf(URL);
    await expect(checkServerUrl("http://127.0.0.1:9000/mcp", ["http://127.0.0.1*"], "p", resolveTo())).resolves.toBeInstanceOf(URL);
    await expect(checkServerUrl("http://localhost:9000/sse", ["http://localhost:*"], "p", resolveTo("127.0.0.1"))).resolves.toBeInstanceOf(URL);
    await refusal("http://127.0.0.1:9000/mcp", ["http://*:9000/*"]);
    await refusal("http://10.0.0.5/mcp", ["http://10.*"], resolveTo());
    await refusal("http://localhost:9000/mcp", ["http://*"], resolveTo("127.0.0.1"));
  });

  it("refuses non-http schemes and garbage", async () => {
    await refusal("file:///etc/passwd", ["*"]);
    await refusal("not a url", ["*"]);
  });
});

describe("allowed_tools and require_approval", () => {
  const ro = { name: "lookup", annotations: { readOnlyHint: true } };
  const rw = { name: "delete", annotations: { readOnlyHint: false } };
  it("allowed_tools: names, or a filter by name and read-only hint", () => {
    expect(isAllowed(null, rw)).toBe(true);
    expect(isAllowed(["lookup"], ro)).toBe(true);
    expect(isAllowed(["lookup"], rw)).toBe(false);
    expect(isAllowed({ read_only: true }, ro)).toBe(true);
    expect(isAllowed({ read_only: true }, rw)).toBe(false);
    expect(isAllowed({ tool_names: ["delete"] }, rw)).toBe(true);
    expect(isAllowed({}, rw)).toBe(true);
  });

  it("require_approval: unset means always (OpenAI's default); never; the always/never filter", () => {
    expect(needsApproval(undefined, ro)).toBe(true);
    expect(needsApproval("always", ro)).toBe(true);
    expect(needsApproval("never", rw)).toBe(false);
    expect(needsApproval({ never: { tool_names: ["lookup"] } }, ro)).toBe(false);
    expect(needsApproval({ never: { tool_names: ["lookup"] } }, rw)).toBe(true);
    expect(needsApproval({ always: { tool_names: ["delete"] } }, rw)).toBe(true);
    expect(needsApproval({ always: { tool_names: ["delete"] } }, ro)).toBe(false);
    expect(needsApproval({ never: { read_only: true } }, ro)).toBe(false);
  });
});
