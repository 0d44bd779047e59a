import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeConfigFile } from "../helpers/background.js";
import { startMockUpstream, upstreamError, type MockUpstream } from "../helpers/mock-upstream.js";
import { deadUrl } from "../helpers/pool-config.js";

/** `check --probe` on the real CLI against mock upstreams on loopback. */
let good: MockUpstream;
let locked: MockUpstream;
let noV1: Server;
let noV1Port: number;

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
  good = await startMockUpstream();
  good.setDefault("/models", { kind: "json", body: { object: "list", data: [{ id: "llama3.1:8b", object: "model" }, { id: "qwen3:4b", object: "model" }] } });
  locked = await startMockUpstream();
  locked.setDefault("/models", (req) => (req.headers.authorization === "Bearer sk-right-key-0123456789" ? undefined : upstreamError(401, "Incorrect API key provided: sk-wrong...", "invalid_api_key")));
  noV1 = createServer((req, res) => {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("404 page not found");
    req.resume();
  });
  await new Promise<void>((r) => noV1.listen(0, "127.0.0.1", r));
  noV1Port = (noV1.address() as AddressInfo).port;
});
afterAll(async () => {
  await good?.close();
  await locked?.close();
  await new Promise((r) => noV1?.close(r));
});

describe("check --probe", () => {
  it("reports every endpoint's problem (unreachable, refused key, no /v1, a missing model) and exits 1", async () => {
    const file = writeConfigFile({
      endpoints: [
        { name: "good-box", url: good.url, kind: "chat" },
        { name: "missing-model-box", url: good.url, kind: "chat" },
        { name: "locked-oai", url: locked.url, kind: "openai", api_key: "sk-wrong-key-0123456789" },
        { name: "dead-box", url: await deadUrl(), kind: "chat" },
        { name: "no-v1-box", url: `http://user:hunter2secret@127.0.0.1:${noV1Port}`, kind: "chat" },
      ],
      models: {
        llama: { endpoints: ["good-box"], upstream_model: "llama3.1:8b" },
        mistral: { endpoints: ["missing-model-box"], upstream_model: "mistral:7b" },
        "gpt-4.1": { endpoints: ["locked-oai"] },
        other: { endpoints: ["dead-box", "no-v1-box"] },
      },
    });
    const { code, out } = await cli(["check", "--probe", "--config", file]);
    expect(code).toBe(1);
    const line = (name: string) => out.split("\n").find((l) => l.includes(` ${name} `)) ?? "";
    expect(line("good-box")).toMatch(/^ok\s+good-box\s+reachable, serves 'llama3.1:8b'/);
    expect(line("missing-model-box")).toMatch(/^FAIL .*does not list 'mistral:7b'.*llama3.1:8b, qwen3:4b/);
    expect(line("locked-oai")).toMatch(/^FAIL .*credentials refused \(HTTP 401\)/);
    expect(line("dead-box")).toMatch(/^FAIL .*unreachable \(ECONNREFUSED\)/);
    expect(line("no-v1-box")).toMatch(/^FAIL .*no \/models route \(HTTP 404\): the url probably lacks \/v1/);
    expect(out).toContain("4 of 5 endpoints have problems");
    for (const secret of ["hunter2secret", "sk-wrong-key"]) expect(out).not.toContain(secret);
  });

  it("exits 0 when every endpoint answers and lists its models (the key is sent)", async () => {
    const file = writeConfigFile({
      endpoints: [
        { name: "good-box", url: good.url, kind: "chat" },
        { name: "oai", url: locked.url, kind: "openai", api_key: "sk-right-key-0123456789" },
      ],
      models: { llama: { endpoints: ["good-box"], upstream_model: "llama3.1:8b" }, qwen: { endpoints: [{ name: "good-box", upstream_model: "qwen3:4b" }] }, "gpt-4.1": { endpoints: ["oai"] } },
    });
    const { code, out } = await cli(["check", "--probe", "--config", file]);
    expect(out).toMatch(/ok\s+good-box\s+reachable, serves 'llama3.1:8b', 'qwen3:4b'/);
    expect(out).toMatch(/ok\s+oai\s+reachable, credentials accepted/);
    expect(out).toContain("every endpoint answered");
    expect(code).toBe(0);
  });

  it("without --probe, check contacts nothing", async () => {
    const before = good.requests.length;
    const file = writeConfigFile({ endpoints: [{ name: "good-box", url: good.url, kind: "chat" }], models: { llama: { endpoints: ["good-box"] } } });
    const { code } = await cli(["check", "--config", file]);
    expect(code).toBe(0);
    expect(good.requests.length).toBe(before);
  });
});

describe("check --probe: the file_search embedding model", () => {
  it("embeds a word at each endpoint of the model's pool and reports what fails", async () => {
    const { startDemoBackend } = await import("../../src/demo/backend.js");
    const demo = await startDemoBackend(0, { delayMs: 0 });
    try {
      const file = writeConfigFile({
        endpoints: [
          { name: "demo-box", url: demo.url, kind: "chat" },
          { name: "dead-box", url: await deadUrl(), kind: "chat" },
        ],
        models: { chat: { endpoints: ["demo-box"] }, emb: { endpoints: ["demo-box", "dead-box"] } },
        tools: { file_search: { embedding_model: "emb" } },
      });
      const { code, out } = await cli(["check", "--probe", "--config", file]);
      expect(out).toMatch(/ok\s+embedding emb @ demo-box\s+embeds 'emb': 256 dimensions/);
      expect(out).toMatch(/FAIL\s+embedding emb @ dead-box/);
      expect(out).toContain("the file_search embedding model failed at 1 of 2 endpoints");
      expect(code).toBe(1);
    } finally {
      await demo.close();
    }
  });
});
