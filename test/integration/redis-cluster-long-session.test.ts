import { createHash } from "node:crypto";
import { connect } from "node:net";
import { Redis } from "ioredis";
import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { chainTag } from "../../src/store/chain.js";
import { chainKeys } from "../../src/store/redis/chain-scripts.js";
import { until } from "../helpers/background.js";
import { chatCompletion, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startRedisCluster, type RedisCluster } from "../helpers/redis-cluster.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

/**
 * A long agent session on a Redis Cluster, as a team runs it: two router instances with
 * `durability: replica`, one chain (previous_response_id) and one conversation of 500 turns
 * each, every turn on the other instance than the one before, through the openai SDK. Midway
 * the primary that holds both sessions' slot is SIGKILLed and its replica promoted. The
 * upstream answers each turn with the count and a digest of the messages it received, so
 * every turn proves the model saw the whole history in order: nothing acknowledged is lost,
 * nothing is repeated. The window costs 503 + Retry-After (the SDK waits and retries), never
 * a 500 or a hang; at the end both sessions read back whole, paged, from the other instance,
 * and what Redis holds grows as the session does (not with its square).
 */
const PASSWORD = "cluster-long-session-4b1f";
/** LONG_TURNS=40 for a quick look while working on it; the suite runs 500. */
const TURNS = Number(process.env.LONG_TURNS ?? 500);
const KILL_AT = Math.floor(TURNS / 2);
/** Each turn's new user text (4 KB, as an agent's tool output): the stored content outweighs what a record keeps besides it. */
const TEXT_BYTES = 4_096;
/** How long the promoted primary goes without a replica before the killed node rejoins. */
const NO_REPLICA_MS = 4_000;
const prefix = `rrlong:${process.pid}:`;

let cluster: RedisCluster;
let up: MockUpstream;
const routers: TestRouter[] = [];

/** Count and digest of the message texts, as the upstream reports them back. */
function seen(texts: string[]): string {
  const h = createHash("sha256");
  for (const t of texts) h.update(t).update("\0");
  return `seen ${texts.length} ${h.digest("hex").slice(0, 16)}`;
}

function userText(session: string, turn: number): string {
  const head = `${session} turn ${turn}: `;
  return head + "x".repeat(TEXT_BYTES - head.length);
}

/** Every call the SDK made: its status and Retry-After, or the error it ended in; and the bytes of accepted create bodies. */
const calls: { status: number; retryAfter: string | null }[] = [];
const failures: string[] = [];
let sentBytes = 0;

const recordingFetch: typeof fetch = async (url, init) => {
  try {
    const res = await fetch(url, init);
    calls.push({ status: res.status, retryAfter: res.headers.get("retry-after") });
    if (res.status === 200 && init?.method === "POST" && typeof init.body === "string" && String(url).endsWith("/responses")) sentBytes += Buffer.byteLength(init.body);
    return res;
  } catch (err) {
    failures.push(`${String(url)}: ${(err as Error).message}`);
    throw err;
  }
};

beforeAll(async () => {
  cluster = await startRedisCluster({ password: PASSWORD });
  up = await startMockUpstream();
  up.setDefault("/chat/completions", (rec) => {
    // The bodies grow to 2 MB each: keep none of them.
    up.requests.splice(0);
    const texts = (rec.body.messages as { content: unknown }[]).map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
    return { kind: "json", body: chatCompletion(seen(texts)) };
  });
  const config = {
    server: { api_keys: [{ name: "team-a", key: "key-a" }] },
    endpoints: [{ name: "box", url: up.url, kind: "chat", max_concurrency: 16 }],
    models: { local: { endpoints: ["box"], upstream_model: "llama3.1:8b" } },
    routing: { queue_timeout: "500ms", retry: { attempts: 1, max_time: "5s" } },
    storage: { redis: { cluster: cluster.nodes.map((n) => `${n.host}:${n.port}`), password: PASSWORD }, prefix, durability: "replica", durability_timeout: "2s" },
  };
  for (let i = 0; i < 2; i++) {
    const r = await startTestRouter(config, { apiKey: "key-a" });
    routers.push(r);
    await until(() => r.runtime.stores.status.connected, "the store to connect", 30_000);
  }
  await cluster.waitForReplicas();
}, 90_000);

afterAll(async () => {
  await Promise.all(routers.map((r) => r.close(200)));
  await up?.close();
  await cluster?.stop();
});

/** The SDK as a client would run it: retries (Retry-After honoured) carry it through a failover. */
const sdk = (r: TestRouter) => new OpenAI({ baseURL: `${r.url}/v1`, apiKey: "key-a", maxRetries: 30, timeout: 20_000, fetch: recordingFetch });

/** What the run's keys hold in Redis (MEMORY USAGE, every key under the prefix, on every primary). */
const byKind = new Map<string, number>();
async function storedBytes(): Promise<number> {
  let total = 0;
  byKind.clear();
  for (const port of await cluster.primaryPorts()) {
    const node = new Redis({ host: "127.0.0.1", port, password: PASSWORD, lazyConnect: true });
    try {
      await node.connect();
      let cursor = "0";
      do {
        const [next, keys] = await node.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1_000);
        cursor = next;
        const sizes = await Promise.all(keys.map((k) => node.memory("USAGE", k, "SAMPLES", 0)));
        sizes.forEach((s, k) => {
          total += Number(s ?? 0);
          const kind = keys[k]!.slice(prefix.length).replace(/\{[^}]*\}/, "{}").replace(/(conv_|resp_|msg_)[0-9a-f]+/g, "$1*");
          byKind.set(kind, (byKind.get(kind) ?? 0) + Number(s ?? 0));
        });
      } while (cursor !== "0");
    } finally {
      node.disconnect();
    }
  }
  return total;
}

/**
 * Runs `fn` and returns the commands clients sent to any primary meanwhile that name `key`
 * (MONITOR, on a socket of its own per primary; the commands a script runs are left out).
 */
async function clientCommandsOn(key: string, fn: () => Promise<void>): Promise<string[]> {
  const monitors = (await cluster.primaryPorts()).map((port) => {
    const socket = connect(port, "127.0.0.1");
    const seen = { text: "" };
    socket.on("data", (d) => (seen.text += d));
    socket.write(`AUTH ${PASSWORD}\r\nMONITOR\r\n`);
    return { socket, seen };
  });
  try {
    await until(() => monitors.every((m) => m.seen.text.startsWith("+OK\r\n+OK")), "MONITOR to start");
    await fn();
    await new Promise((r) => setTimeout(r, 50)); // MONITOR lines trail the replies
    return monitors.flatMap((m) =>
      m.seen.text
        .split("\r\n")
        .filter((line) => / \[\d+ [\d.:]+\] /.test(line) && line.includes(`"${key}"`))
        .map((line) => /\] "([a-zA-Z]+)"/.exec(line)![1]!.toLowerCase()),
    );
  } finally {
    for (const m of monitors) m.socket.destroy();
  }
}

type Listed = { id?: string; type: string; content?: { text?: string }[] };

/** Every item of a list, page after page, each asked `after` the last one of the page before. */
async function allPages(page: (after: string | undefined) => Promise<{ data: unknown[]; has_more: boolean }>): Promise<Listed[]> {
  const out: Listed[] = [];
  for (let after: string | undefined; ; ) {
    const p = await page(after);
    out.push(...(p.data as Listed[]));
    if (!p.has_more) return out;
    after = out.at(-1)!.id;
  }
}

/** The texts of listed items (a message's text parts), in order. */
const textsOf = (items: Listed[]) => items.map((i) => (i.content ?? []).map((c) => c.text ?? "").join(""));

it(`a chain and a conversation of ${TURNS} turns through two instances keep their whole history across a primary's failover`, async () => {
  const [a, b] = routers.map(sdk) as [OpenAI, OpenAI];
  const chainTexts: string[] = [];
  const convTexts: string[] = [];

  const turn = async (client: OpenAI, texts: string[], session: string, n: number, link: { previous_response_id: string } | { conversation: string } | object) => {
    texts.push(userText(session, n));
    const r = await client.responses.create({ model: "local", input: texts.at(-1)!, ...link });
    // The upstream saw every earlier message, in order, and this one: the whole history.
    expect(r.output_text, `${session} turn ${n}`).toBe(seen(texts));
    texts.push(r.output_text);
    return r;
  };

  // The chain's first turn fixes its slot; the conversation is made on the same primary, so one kill hits both.
  let last = (await turn(a, chainTexts, "chain", 0, {})).id;
  const chainKey = chainKeys(prefix, chainTag(last)).hash;
  const victim = await cluster.primaryOf(chainKey);
  let conversation = "";
  for (let tries = 0; !conversation; tries++) {
    expect(tries).toBeLessThan(40);
    const c = await b.conversations.create();
    if ((await cluster.primaryOf(`${chainKeys(prefix, chainTag(c.id)).conv}${c.id}`)) === victim) conversation = c.id;
    else await b.conversations.delete(c.id);
  }

  let failover: Promise<{ promotedMs: number; replicaBackMs: number }> | null = null;
  let bytesAtKill = 0;
  let sentAtKill = 0;
  let firstOkAfterKill = 0;
  let killedAt = 0;
  for (let n = 0; n < TURNS; n++) {
    if (n === KILL_AT) {
      bytesAtKill = await storedBytes();
      sentAtKill = sentBytes;
      killedAt = Date.now();
      await cluster.kill(victim);
      failover = (async () => {
        await cluster.waitForNewPrimary(chainKey, victim, 45_000);
        await cluster.waitForOk(45_000);
        const promotedMs = Date.now() - killedAt;
        // The promoted primary has no replica until the killed node rejoins as one (a machine takes
        // a while to come back): meanwhile durable writes to that shard cannot be confirmed.
        await new Promise((r) => setTimeout(r, NO_REPLICA_MS));
        await cluster.rejoin(victim);
        await cluster.waitForReplicas(45_000);
        return { promotedMs, replicaBackMs: Date.now() - killedAt };
      })();
    }
    const [one, other] = n % 2 ? [b, a] : [a, b];
    // The two sessions run side by side, each turn on the other instance than its last.
    await Promise.all([n > 0 ? turn(one, chainTexts, "chain", n, { previous_response_id: last }).then((r) => (last = r.id)) : null, turn(other, convTexts, "conversation", n, { conversation })]);
    if (n === KILL_AT) firstOkAfterKill = Date.now() - killedAt;
  }
  const timings = await failover!;

  // The window answered 503 + Retry-After (the SDK retried them), nothing else failed, nothing hung.
  const unavailable = calls.filter((c) => c.status === 503);
  expect(failures).toEqual([]);
  expect(calls.filter((c) => c.status !== 200 && c.status !== 503)).toEqual([]);
  expect(unavailable.length).toBeGreaterThan(0);
  expect(unavailable.every((c) => c.retryAfter === "1")).toBe(true);

  // The whole chain, paged by `after`, from the instance that did not make its last turn.
  const readChain = (TURNS - 1) % 2 ? a : b;
  const chainItems = await allPages((after) => readChain.responses.inputItems.list(last, { limit: 100, order: "asc", ...(after ? { after } : {}) }));
  expect(chainItems.length).toBe(2 * TURNS - 1);
  expect(textsOf(chainItems)).toEqual(chainTexts.slice(0, -1));
  // The newest first (the default order), a page from the middle.
  const newest = await readChain.responses.inputItems.list(last, { limit: 3 });
  expect(textsOf(newest.data as Listed[])).toEqual(chainTexts.slice(-4, -1).reverse());

  // The conversation, paged, from the instance that did not make its last turn.
  const readConv = (TURNS - 1) % 2 ? b : a;
  const convItems = await allPages((after) => readConv.conversations.items.list(conversation, { limit: 100, order: "asc", ...(after ? { after } : {}) }));
  expect(convItems.length).toBe(2 * TURNS);
  expect(textsOf(convItems)).toEqual(convTexts);

  // At depth 500, after the failover, a turn still reads its whole history in one round trip: one script call.
  const more = 4;
  const commands = await clientCommandsOn(chainKey, async () => {
    for (let n = TURNS; n < TURNS + more; n++) last = (await turn(n % 2 ? b : a, chainTexts, "chain", n, { previous_response_id: last })).id;
  });
  // Per turn: the history read and the save, each one script call on the chain's key.
  expect(commands).toEqual(Array.from({ length: 2 * more }, () => "eval"));

  // What Redis holds grows as the sessions do: linear in what was sent, the same ratio at the end as at the kill.
  const bytesAtEnd = await storedBytes();
  const ratioAtKill = bytesAtKill / sentAtKill;
  const ratioAtEnd = bytesAtEnd / sentBytes;
  console.log(
    `long session: ${calls.length} calls, ${unavailable.length} answered 503; failover: promoted after ${timings.promotedMs} ms, replica back after ${timings.replicaBackMs} ms, ` +
      `the turn at the kill succeeded after ${firstOkAfterKill} ms; stored ${bytesAtKill} B for ${sentAtKill} B sent at turn ${KILL_AT} (${ratioAtKill.toFixed(2)}x), ` +
      `${bytesAtEnd} B for ${sentBytes} B at turn ${TURNS} (${ratioAtEnd.toFixed(2)}x)`,
  );
  expect(ratioAtEnd).toBeLessThanOrEqual(2);
  expect(ratioAtEnd / ratioAtKill).toBeLessThan(1.2);
}, 240_000);
