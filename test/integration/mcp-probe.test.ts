/** `check --probe` lists each operator-defined MCP server's tools, or says why it could not. */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { writeConfigFile } from "../helpers/background.js";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-server.js";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";

let mcp: TestMcpServer;
let box: MockUpstream;

function cli(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.once("exit", (code) => resolve({ code, out }));
  });
}

beforeAll(async () => {
  mcp = await startMcpServer();
  box = await startMockUpstream();
  box.setDefault("/models", { kind: "json", body: { object: "list", data: [{ id: "m", object: "model" }] } });
});
afterAll(async () => {
  await mcp?.close();
  await box?.close();
});

it("check --probe: a server's tools, an unreachable server's cause, exit 1; headers never printed", async () => {
  const file = writeConfigFile({
    endpoints: [{ name: "box", url: box.url, kind: "chat" }],
    models: { m: { endpoints: ["box"] } },
    tools: {
      mcp: {
        servers: [
          { label: "wiki", url: mcp.url, headers: { Authorization: "Bearer probe-secret-333" } },
          { label: "gone", url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer probe-secret-444" } },
        ],
      },
    },
  });
  const { code, out } = await cli(["check", "--probe", "--config", file]);
  expect(out).toMatch(/ok\s+mcp wiki\s+6 tools: echo, add, lookup, fail, slow, big/);
  expect(out).toMatch(/FAIL mcp gone\s+tools could not be listed/);
  expect(out).toContain("1 of 2 MCP servers have problems");
  expect(out).not.toContain("probe-secret");
  expect(mcp.headers.some((h) => h.authorization === "Bearer probe-secret-333")).toBe(true);
  expect(code).toBe(1);
});
