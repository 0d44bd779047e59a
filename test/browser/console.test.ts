import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildConsole, startBrowser, type TestBrowser } from "../helpers/browser.js";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import { sdkWith as sdk, statusOf, statusUntil401 } from "../helpers/made-keys.js";

/**
 * The console (/ui/) in a real browser, used as a person would: sign in, make a key, use it
 * with the openai SDK, find its request and usage on the pages (checked against /metrics and
 * /v1/usage), revoke it. CONSOLE_SCREENSHOTS=docs/images writes each page's screenshot there.
 */

const ADMIN = "rr-console-admin-7e1f2a3b4c5d";
const USER = "rr-console-user-0d9c8b7a6f5e";
const UPSTREAM_SECRET = "sk-upstream-console-secret-42";
const shots = process.env.CONSOLE_SCREENSHOTS;

const config = (chatUrl: string, extra: Record<string, unknown> = {}) => ({
  server: {
    api_keys: [
      { name: "ops", key: ADMIN, role: "admin" },
      { name: "dev", key: USER, limits: { requests_per_minute: 600 } },
    ],
    ...((extra.server as object) ?? {}),
  },
  endpoints: [
    { name: "box", url: chatUrl, kind: "chat", max_concurrency: 4, api_key: UPSTREAM_SECRET },
    { name: "spare", url: chatUrl, kind: "chat", max_concurrency: 2 },
  ],
  models: { local: { endpoints: ["box", "spare"] }, small: { endpoints: ["spare"] } },
  routing: { health: { probe_interval: "1s" } },
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== "server")),
});

const num = (text: string | null) => Number((text ?? "").replace(/[^0-9.]/g, ""));

/** The sum of a counter's series in /metrics text whose labels include every `match`. */
function metricSum(text: string, name: string, match: string[]): number {
  let sum = 0;
  for (const line of text.split("\n")) if (line.startsWith(`${name}{`) && match.every((m) => line.includes(m))) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  return sum;
}

beforeAll(() => buildConsole());

describe("the console in Chromium", () => {
  let chat: MockUpstream;
  let router: TestRouter;
  let b: TestBrowser;

  beforeAll(async () => {
    chat = await startMockUpstream();
    router = await startTestRouter(config(chat.url), { apiKey: ADMIN });
    b = await startBrowser(router.url);
  });
  afterAll(async () => {
    await b?.close();
    await router?.close(500);
    await chat?.close();
  });

  const shot = async (name: string) => {
    if (shots) await b.page.screenshot({ path: `${shots}/console-${name}.png`, fullPage: true });
  };

  it("a person signs in, makes a key, uses it, sees it on every page and revokes it", { timeout: 90_000 }, async () => {
    const { page } = b;
    await page.goto(`${router.url}/ui/`);
    // The sign-in page loads without a key; a wrong key and a user key are turned away.
    await page.getByLabel("Admin key").fill("rr-not-a-key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Incorrect API key");
    await page.getByLabel("Admin key").fill(USER);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("insufficient permissions");
    await shot("sign-in");
    await page.getByLabel("Admin key").fill(ADMIN);
    await page.getByRole("button", { name: "Sign in" }).click();
    for (const name of ["Overview", "Models", "Keys", "Usage", "Requests", "Jobs", "Config"]) await page.getByRole("link", { name, exact: true }).waitFor();
    // The key is this tab's only: sessionStorage, never localStorage, a cookie or the URL.
    expect(await page.evaluate("[Object.values(sessionStorage), localStorage.length, document.cookie]")).toEqual([[ADMIN], 0, ""]);
    expect(page.url()).not.toContain(ADMIN);

    // Keys: make one; its secret is shown once.
    await page.getByRole("link", { name: "Keys", exact: true }).click();
    await page.getByRole("table", { name: "API keys" }).getByText("config (read-only)").first().waitFor();
    await page.getByLabel("Name", { exact: true }).fill("alice");
    await page.getByLabel("Requests per minute").first().fill("100");
    await page.getByLabel("Tokens per day").first().fill("5000");
    await page.getByRole("button", { name: "Create key" }).click();
    const secretField = page.getByLabel("New key (shown once)");
    await secretField.waitFor();
    const secret = (await secretField.textContent())!;
    expect(await page.getByRole("textbox", { name: "New key (shown once)" }).count()).toBe(1);
    expect(secret).toMatch(/^sk-/);
    await page.getByRole("button", { name: "Copy key" }).click();
    await expect.poll(() => page.getByText("Copied.").count()).toBe(1);
    const aliceRow = page.getByRole("row").filter({ hasText: "alice" });
    await expect.poll(() => aliceRow.textContent()).toContain(`sk-...${secret.slice(-4)}`);
    await shot("keys");
    await page.getByRole("button", { name: "Done" }).click();
    expect(await page.content()).not.toContain(secret);

    // The new teammate uses it at once with the openai SDK.
    const alice = sdk(router, secret);
    const answer = await alice.responses.create({ model: "local", input: "hello from alice" });
    expect(answer.output_text).toBe("Hello world");
    const job = await alice.responses.create({ model: "local", input: "in the background", background: true });

    // Requests: alice's request, which opens to its input and output.
    await page.getByRole("link", { name: "Requests", exact: true }).click();
    const row = page.getByRole("row").filter({ hasText: answer.id });
    await row.waitFor();
    const cells = await row.getByRole("cell").allTextContents();
    expect(cells.slice(1, 7)).toEqual(["alice", "local", "/v1/responses", "200", "5", "2"]);
    await page.getByRole("button", { name: `Open ${answer.id}` }).click();
    await expect.poll(() => page.getByLabel("Input", { exact: true }).textContent()).toContain("hello from alice");
    expect(await page.getByLabel("Output", { exact: true }).textContent()).toContain("Hello world");
    expect(await page.getByRole("region", { name: "Response" }).textContent()).toContain("tracing is off");
    await shot("requests");

    // Usage: what /v1/usage says for alice today.
    const usage = (await (await router.fetch("/v1/usage?key=alice", { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { totals: { model: string; requests: number; input_tokens: number; output_tokens: number; total_tokens: number }[] };
    expect(usage.totals.length).toBe(1);
    await page.getByRole("link", { name: "Usage", exact: true }).click();
    const usageRow = page.getByRole("table", { name: "Totals per key and model" }).getByRole("row").filter({ hasText: "alice" });
    await usageRow.waitFor();
    const u = usage.totals[0]!;
    expect(await usageRow.getByRole("cell").allTextContents()).toEqual(["alice", u.model, String(u.requests), String(u.input_tokens), String(u.output_tokens), String(u.total_tokens)]);
    await page.getByRole("img", { name: "Tokens per day by key chart" }).locator("canvas").waitFor();
    const download = page.waitForEvent("download");
    await page.getByRole("button", { name: "Export CSV" }).click();
    const csv = await (await download).createReadStream().then(async (s) => {
      let text = "";
      for await (const c of s) text += c;
      return text;
    });
    expect(csv.split("\n")[0]).toBe("date,key,model,requests,input_tokens,output_tokens,total_tokens");
    expect(csv).toContain(`,alice,${u.model},${u.requests},${u.input_tokens},${u.output_tokens},${u.total_tokens}`);
    await shot("usage");

    // Overview: the tokens the router counted, as /metrics has them.
    const metrics = await (await router.fetch("/metrics")).text();
    await page.getByRole("link", { name: "Overview", exact: true }).click();
    const inputTile = page.locator('[data-tile="Input tokens"]');
    await inputTile.waitFor();
    expect(num(await inputTile.textContent())).toBe(metricSum(metrics, "responses_router_tokens_total", ['type="input"']));
    expect(num(await page.locator('[data-tile="Output tokens"]').textContent())).toBe(metricSum(metrics, "responses_router_tokens_total", ['type="output"']));
    expect(metricSum(metrics, "responses_router_tokens_total", ['type="input"', 'key="alice"'])).toBeGreaterThan(0);
    await router.runtime.history.sample();
    await shot("overview");

    // Models and endpoints: live health, in flight, the last probe.
    await page.getByRole("link", { name: "Models", exact: true }).click();
    const box = page.getByRole("table", { name: "Endpoints" }).getByRole("row").filter({ hasText: "box" });
    await box.waitFor();
    expect(await box.textContent()).toContain("healthy");
    expect(await box.textContent()).toContain("0 / 4");
    await expect.poll(() => box.textContent(), { timeout: 5_000 }).toMatch(/ok \(HTTP 200\)/);
    await shot("models");

    // Jobs: the background response, finished.
    await page.getByRole("link", { name: "Jobs", exact: true }).click();
    await expect.poll(() => page.getByRole("row").filter({ hasText: job.id }).textContent(), { timeout: 10_000 }).toContain("completed");
    await shot("jobs");

    // Config: in force, every secret redacted.
    await page.getByRole("link", { name: "Config", exact: true }).click();
    const cfg = page.getByLabel("Effective config");
    await cfg.waitFor();
    const cfgText = (await cfg.textContent())!;
    expect(cfgText).toContain('"key": "[redacted]"');
    expect(cfgText).toContain('"api_key": "[redacted]"');
    for (const secretText of [ADMIN, USER, UPSTREAM_SECRET, secret]) expect(cfgText).not.toContain(secretText);
    await shot("config");

    // Keys: alice's use today, then revoke: the SDK gets 401.
    await page.getByRole("link", { name: "Keys", exact: true }).click();
    await expect.poll(() => aliceRow.textContent()).toMatch(/5,000/);
    const aliceToday = (await aliceRow.getByRole("cell").allTextContents())[6];
    expect(aliceToday).toBe(String(u.requests));
    await aliceRow.getByRole("button", { name: "Revoke" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("revoked");
    await expect.poll(() => aliceRow.count()).toBe(0);
    const refused = await alice.responses.create({ model: "local", input: "still there?" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);

    // Nothing came from elsewhere, the CSP refused nothing the pages needed, no page showed a secret.
    expect(b.foreign).toEqual([]);
    expect(b.errors.filter((e) => /Content Security Policy|Refused/.test(e))).toEqual([]);
    for (const secretText of [ADMIN, USER, UPSTREAM_SECRET]) expect(await page.content()).not.toContain(secretText);
  });

  it("edits a key's limits from its row", async () => {
    const { page } = b;
    const made = (await (await router.fetch("/v1/admin/keys", { method: "POST", headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: JSON.stringify({ name: "bob" }) })).json()) as { id: string };
    await page.getByRole("link", { name: "Overview", exact: true }).click();
    await page.getByRole("link", { name: "Keys", exact: true }).click();
    const bobRow = page.getByRole("row").filter({ hasText: "bob" });
    await bobRow.getByRole("button", { name: "Edit limits" }).click();
    const form = page.getByRole("form", { name: "Limits of bob" });
    await form.getByLabel("Tokens per minute").fill("2500");
    await form.getByRole("button", { name: "Save limits" }).click();
    await expect.poll(() => bobRow.textContent()).toContain("tokens per minute: 2,500");
    const stored = (await (await router.fetch(`/v1/admin/keys/${made.id}`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { limits: unknown };
    expect(stored.limits).toEqual({ tokens_per_minute: 2500 });
  });

  it("serves the pages with a strict CSP and nothing inline", async () => {
    const res = await router.fetch("/ui/");
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|\son[a-z]+=/);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect((await router.fetch("/ui", { redirect: "manual" })).headers.get("location")).toBe("/ui/");
    expect((await router.fetch("/ui/app.js")).headers.get("content-type")).toContain("javascript");
    expect((await router.fetch("/ui/nope.js")).status).toBe(404);
  });
});

describe("server.admin_ui: false", () => {
  it("answers 404 at /ui/ while the admin API stays", async () => {
    const chat = await startMockUpstream();
    const router = await startTestRouter(config(chat.url, { server: { admin_ui: false } }), { apiKey: ADMIN });
    try {
      for (const path of ["/ui", "/ui/", "/ui/app.js"]) {
        const res = await router.fetch(path);
        expect(res.status, path).toBe(404);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unknown_url");
      }
      expect((await router.fetch("/v1/admin/keys", { headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(200);
    } finally {
      await router.close(500);
      await chat.close();
    }
  });
});

describe("the console over two instances on one Redis", () => {
  let redis: RedisServerHandle;
  let chat: MockUpstream;
  let a: TestRouter;
  let other: TestRouter;
  let b: TestBrowser;

  beforeAll(async () => {
    redis = await startRedis();
    chat = await startMockUpstream();
    const cfg = config(chat.url, { storage: { redis_url: redis.url, prefix: `rrconsole:${process.pid}:` } });
    a = await startTestRouter(cfg, { apiKey: ADMIN });
    other = await startTestRouter(cfg, { apiKey: ADMIN });
    b = await startBrowser(a.url);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close(500);
    await other?.close(500);
    await chat?.close();
    await redis?.stop().catch(() => {});
  });

  it("a key made in the console works on the other instance at once; revoked, it answers 401 there within a second", async () => {
    const { page } = b;
    await page.goto(`${a.url}/ui/#/keys`);
    await page.getByLabel("Admin key").fill(ADMIN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByLabel("Name", { exact: true }).fill("carol");
    await page.getByRole("button", { name: "Create key" }).click();
    const secret = (await page.getByLabel("New key (shown once)").textContent())!;
    expect(await statusOf(sdk(other, secret).responses.create({ model: "local", input: "hi" }))).toBe(200);
    await page.getByRole("row").filter({ hasText: "carol" }).getByRole("button", { name: "Revoke" }).click();
    await expect.poll(() => page.getByRole("row").filter({ hasText: "carol" }).count()).toBe(0);
    const revokedAt = Date.now();
    expect(await statusOf(sdk(a, secret).models.list())).toBe(401);
    expect(await statusUntil401(other, secret, revokedAt)).toBe(401);
  });
});
