import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";

/**
 * Seeded fuzzing: valid bodies mutated into malformed ones (wrong types, deleted
 * keys, junk items, huge numbers, deep nesting, invalid UTF-8, truncated JSON,
 * wrong content-types) sent to /v1/responses and the other routes. Whatever
 * arrives, the router answers below 500, every error has the OpenAI shape, and
 * it still serves a valid request afterwards. A failure prints the seed and case.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20240611);
const CASES = Number(process.env.FUZZ_CASES ?? 320);

/** mulberry32: small, seedable, good enough to pick mutations. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
  };
}
type Rng = ReturnType<typeof prng>;

const VALID: Record<string, unknown>[] = [
  { model: "local", input: "hello" },
  { model: "gpt-4.1", input: "hello", stream: true },
  { model: "local", instructions: "be brief", input: [{ role: "user", content: [{ type: "input_text", text: "hi" }] }], temperature: 0.5, max_output_tokens: 50 },
  {
    model: "local",
    input: [
      { type: "message", role: "user", content: "weather?" },
      { type: "function_call", call_id: "c1", name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "function_call_output", call_id: "c1", output: "sunny" },
    ],
    tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }],
    tool_choice: "auto",
  },
  { model: "gpt-4.1", input: "json please", text: { format: { type: "json_schema", name: "x", schema: { type: "object" } } }, metadata: { k: "v" }, store: false },
  { model: "local", input: [{ role: "user", content: [{ type: "input_image", image_url: "data:image/png;base64,AAAA" }] }], stream: true },
  { model: "local", input: "x", tools: [{ type: "namespace", name: "ns", tools: [{ type: "function", name: "f" }] }, { type: "web_search" }], reasoning: { effort: "low" } },
];

const JUNK: readonly unknown[] = [
  null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, "", "x", "🦙".repeat(50), "\u0000", "a".repeat(5000),
  [], [null], [1, "a", {}], {}, { type: "???" }, { role: "user" }, { type: "message", role: "user", content: 5 },
  { type: "function_call" }, { type: "item_reference", id: 7 }, { type: "input_text" }, JSON.parse('{"__proto__":{"polluted":true}}'), { constructor: "x" },
];

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** Every [container, key] path in a value, so a mutation can land anywhere. */
function paths(v: unknown, out: [Record<string, unknown> | unknown[], string | number][] = []): typeof out {
  if (v && typeof v === "object") {
    for (const [k, child] of Object.entries(v)) {
      out.push([v as Record<string, unknown>, Array.isArray(v) ? Number(k) : k]);
      paths(child, out);
    }
  }
  return out;
}

interface Case {
  method: string;
  path: string;
  body?: string | Uint8Array;
  contentType?: string;
  label: string;
}

/** Valid pass-through bodies, mutated the same way for /v1/chat/completions and /v1/embeddings. */
const VALID_PASSTHROUGH: [string, Record<string, unknown>][] = [
  ["/v1/chat/completions", { model: "local", messages: [{ role: "user", content: "hi" }], max_tokens: 5 }],
  ["/v1/chat/completions", { model: "gpt-4.1", messages: [{ role: "system", content: "x" }, { role: "user", content: [{ type: "text", text: "hi" }] }], stream: true }],
  ["/v1/embeddings", { model: "local", input: ["a", "b"] }],
];

function mutateBody(rng: Rng, path = "/v1/responses", base: Record<string, unknown> = rng.pick(VALID)): Case {
  const body = clone(base);
  const all = paths(body);
  const kind = rng.int(11);
  const [holder, key] = rng.pick(all);
  const set = (v: unknown) => ((holder as Record<string | number, unknown>)[key] = v);
  let text: string | undefined;
  let bytes: Uint8Array | undefined;
  let contentType = "application/json";
  let label: string;
  switch (kind) {
    case 0:
      set(rng.pick(JUNK));
      label = `junk at ${String(key)}`;
      break;
    case 1:
      if (Array.isArray(holder)) holder.splice(key as number, 1);
      else delete (holder as Record<string, unknown>)[key as string];
      label = `deleted ${String(key)}`;
      break;
    case 2: {
      const items = Array.isArray(body.input) ? body.input : [];
      for (let i = 0, n = 1 + rng.int(4); i < n; i++) items.splice(rng.int(items.length + 1), 0, rng.pick(JUNK));
      body.input = items;
      label = "junk input items";
      break;
    }
    case 3:
      set(rng.pick([1e400, -1e400, 123456789012345678901234567890, 2 ** 31, -(2 ** 63), 1e-400]));
      text = JSON.stringify(body).replace(/1e\+400|Infinity/g, "1e400").replace(/null/g, () => (rng.int(3) === 0 ? "1e999" : "null"));
      label = `huge number at ${String(key)}`;
      break;
    case 4: {
      const depth = rng.pick([50, 200, 20_000, 100_000]);
      // Anywhere, or where validation lets any JSON through (unknown keys, schemas).
      const where = rng.int(3);
      if (where === 0) set("__DEEP__");
      else if (where === 1) body.client_metadata = { nested: "__DEEP__" };
      else body.text = { format: { type: "json_schema", name: "deep", schema: { type: "object", properties: "__DEEP__" } } };
      const nest = rng.int(2) === 0 ? ["[".repeat(depth), "]".repeat(depth)] : ['{"a":'.repeat(depth), "}".repeat(depth)];
      text = JSON.stringify(body).replace('"__DEEP__"', `${nest[0]}1${nest[1]}`);
      label = `nesting ${depth} at ${["a random key", "client_metadata", "text.format.schema"][where]}`;
      break;
    }
    case 5: {
      const raw = new TextEncoder().encode(JSON.stringify(body));
      bytes = new Uint8Array(raw);
      for (let i = 0, n = 1 + rng.int(6); i < n; i++) bytes[rng.int(bytes.length)] = rng.pick([0xff, 0xfe, 0xc0, 0x80, 0xed, 0x00]);
      label = "invalid UTF-8 bytes";
      break;
    }
    case 6: {
      const full = JSON.stringify(body);
      text = full.slice(0, rng.int(full.length));
      label = `truncated at ${text.length}`;
      break;
    }
    case 7:
      contentType = rng.pick(["text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "application/xml", ""]);
      text = rng.int(2) === 0 ? JSON.stringify(body) : "model=local&input=hi";
      label = `content-type ${contentType}`;
      break;
    case 8:
      set(typeof (holder as Record<string | number, unknown>)[key] === "string" ? 42 : "a string");
      label = `type flip at ${String(key)}`;
      break;
    case 9:
      text = JSON.stringify(rng.pick([[body], "body", 42, null, true]));
      label = "non-object body";
      break;
    default:
      text = JSON.stringify(body).replace(/"(model|input|type|role)"/g, (m) => (rng.int(3) === 0 ? `"${m.slice(1, -1).toUpperCase()}"` : m));
      label = "renamed keys";
  }
  return { method: "POST", path, body: bytes ?? text ?? JSON.stringify(body), contentType, label };
}

function otherRoute(rng: Rng): Case {
  const junkId = rng.pick(["not-an-id", "resp_", `resp_${"x".repeat(500)}`, "%00", "..%2f..%2fetc", "resp_%F0%9F%A6%99", "' OR 1=1 --"]);
  const choice = rng.int(7);
  if (choice === 0) return { method: "GET", path: `/v1/responses/${junkId}`, label: "get junk id" };
  if (choice === 1) return { method: "DELETE", path: `/v1/responses/${junkId}`, label: "delete junk id" };
  if (choice === 2) {
    const q = rng.pick(["limit=-1", "limit=1e9", "order=up", "after=%00", "limit=", "include[]=x&limit=NaN"]);
    return { method: "GET", path: `/v1/responses/${junkId}/input_items?${q}`, label: "input_items junk" };
  }
  if (choice === 3) return { method: "POST", path: `/v1/responses/${junkId}/cancel`, body: "{}", label: "cancel junk id" };
  if (choice === 4) return { method: rng.pick(["PUT", "PATCH", "DELETE", "GET"]), path: "/v1/responses", body: undefined, label: "wrong method" };
  if (choice === 5) return { method: "GET", path: `/v1/models/${junkId}`, label: "model junk" };
  return { method: rng.pick(["GET", "POST"]), path: rng.pick(["/v1/", "/v1/responsez", "/v1/responses/x/y/z", "/admin", "/v1/chat", "/%%%"]), body: "{}", label: "unknown route" };
}

let chat: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;

beforeAll(async () => {
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  router = await startTestRouter(twoKindConfig(chat.url, oai.url));
});
afterAll(async () => {
  await router.close(500);
  await chat.close();
  await oai.close();
});

describe(`fuzz (seed ${SEED}, ${CASES} cases)`, () => {
  it("never answers 5xx, always in OpenAI error shape, and keeps serving", async () => {
    const rng = prng(SEED);
    const counts: Record<number, number> = {};
    for (let i = 0; i < CASES; i++) {
      const roll = rng.int(8);
      const c = roll < 2 ? otherRoute(rng) : roll === 2 ? mutateBody(rng, ...rng.pick(VALID_PASSTHROUGH)) : mutateBody(rng);
      const headers: Record<string, string> = {};
      if (c.contentType) headers["content-type"] = c.contentType;
      const res = await router.fetch(c.path, { method: c.method, body: c.method === "GET" ? undefined : c.body, headers });
      const text = await res.text();
      const where = `case ${i} (seed ${SEED}): ${c.label}: ${c.method} ${c.path} -> ${res.status} ${text.slice(0, 300)}`;
      counts[res.status] = (counts[res.status] ?? 0) + 1;
      expect(res.status, where).toBeLessThan(500);
      if (res.status >= 400) {
        const body = JSON.parse(text) as { error: Record<string, unknown> };
        expect(Object.keys(body), where).toEqual(["error"]);
        expect(typeof body.error.message, where).toBe("string");
        expect(typeof body.error.type, where).toBe("string");
        expect(body.error.param === null || typeof body.error.param === "string", where).toBe(true);
        expect(body.error.code === null || typeof body.error.code === "string", where).toBe(true);
      }
    }
    // The mutations mostly produce errors, and each family of status is represented.
    expect(Object.entries(counts).filter(([s]) => Number(s) >= 400).reduce((n, [, v]) => n + v, 0)).toBeGreaterThan(CASES / 2);
    const ok = await router.client.responses.create({ model: "local", input: "still there?" });
    expect(ok.output_text).toBe("Hello world");
    const streamed = await router.client.responses.stream({ model: "gpt-4.1", input: "still there?" }).finalResponse();
    expect(streamed.output_text).toBe("Hello from upstream");
  });
});
