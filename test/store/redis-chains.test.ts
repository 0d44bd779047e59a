import { connect } from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStores, type StorageConfig, type StoredResponse, type Stores } from "../../src/store/index.js";
import { chainTag, idInChain } from "../../src/store/chain.js";
import { chainKeys } from "../../src/store/redis/chain-scripts.js";
import type { Item } from "../../src/wire/types.js";
import { randomId } from "../../src/wire/ids.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { turn } from "./chain-contract.js";
import { makeResponse, sleep } from "./support.js";

/** The Redis layout of chains: one round trip for a history at any depth, no key left behind, and the previous release's records. */
let redis: RedisServerHandle;
let raw: Redis;
let n = 0;
const prefix = () => `rrchain:${process.pid}:${++n}:`;
const config = (url: string, p: string, ttl = 60_000): StorageConfig => ({ redis_url: url, prefix: p, ttl, memory: { max_entries: 100, max_bytes: 1_000_000 } });

beforeAll(async () => {
  redis = await startRedis();
  raw = new Redis(redis.url);
});
afterAll(async () => {
  raw?.disconnect();
  await redis?.stop();
});

/** The commands clients send on the keys under `p` (MONITOR, on a socket of its own; those a script runs are left out) while `fn` runs. */
async function clientCommands<T>(p: string, fn: () => Promise<T>): Promise<{ result: T; commands: string[] }> {
  const socket = connect(redis.port, "127.0.0.1");
  let text = "";
  socket.on("data", (d) => (text += d));
  socket.write("MONITOR\r\n");
  while (!text.startsWith("+OK")) await sleep(5);
  try {
    const result = await fn();
    await sleep(30); // MONITOR lines trail the replies
    const commands = text
      .split("\r\n")
      .filter((line) => / \[\d+ [\d.:]+\] /.test(line) && line.includes(`"${p}chain`))
      .map((line) => /\] "([a-zA-Z]+)"/.exec(line)![1]!.toLowerCase());
    return { result, commands };
  } finally {
    socket.destroy();
  }
}

async function saveChain(stores: Stores, depth: number): Promise<StoredResponse> {
  let parent: StoredResponse | null = null;
  for (let i = 0; i < depth; i++) {
    const rec = turn(parent, i);
    await stores.responses.save(rec);
    parent = rec;
  }
  return parent!;
}

describe("redis chains", () => {
  it("reads the history of a turn at depth 1, 10, 50 and 200 in one round trip (one script call), and stores a turn in a number of commands that does not grow", async () => {
    const p = prefix();
    const stores = await createStores(config(redis.url, p));
    try {
      const perTurn: number[] = [];
      let parent: StoredResponse | null = null;
      for (let i = 0; i < 200; i++) {
        const rec = turn(parent, i);
        parent = rec;
        if (i !== 0 && i !== 9 && i !== 49 && i !== 199) {
          await stores.responses.save(rec);
          continue;
        }
        const saved = await clientCommands(p, () => stores.responses.save(rec));
        perTurn.push(saved.commands.length);
        const { result, commands } = await clientCommands(p, () => stores.responses.get(rec.response.id));
        expect(result!.input).toEqual(rec.input);
        expect(commands, `depth ${i + 1}`).toEqual(["eval"]);
      }
      // One script and one SET per item the turn added (its input and output), at every depth.
      expect(new Set(perTurn)).toEqual(new Set([3]));
      // Another instance, which holds none of the chain: one script call too.
      const cold = await createStores(config(redis.url, p));
      try {
        const { result, commands } = await clientCommands(p, () => cold.responses.get(parent!.response.id));
        expect(result!.input).toEqual(parent!.input);
        expect(commands).toEqual(["eval"]);
      } finally {
        await cold.close();
      }
    } finally {
      await stores.close();
    }
  });

  it("the history an instance holds: the next turn reads only what it lacks, and another instance's delete or rewrite is seen at once", async () => {
    const p = prefix();
    const a = await createStores(config(redis.url, p));
    const b = await createStores(config(redis.url, p));
    const sentBytes = async (fn: () => Promise<unknown>) => {
      const before = Number(/total_net_output_bytes:(\d+)/.exec(await raw.info("stats"))![1]);
      await fn();
      return Number(/total_net_output_bytes:(\d+)/.exec(await raw.info("stats"))![1]) - before;
    };
    try {
      const leaf = await saveChain(a, 60);
      const historyBytes = JSON.stringify(leaf.input).length;
      // Instance a made the chain: its read of the leaf carries the leaf's response, not the history; b's carries it all.
      let fromA: StoredResponse | null = null;
      const aBytes = await sentBytes(async () => (fromA = await a.responses.get(leaf.response.id)));
      const bBytes = await sentBytes(() => b.responses.get(leaf.response.id));
      expect(fromA!.input).toEqual(leaf.input);
      expect(fromA!.response).toEqual(leaf.response);
      expect(fromA!.basis).toEqual(leaf.basis);
      expect(aBytes).toBeLessThan(historyBytes / 10);
      expect(bBytes).toBeGreaterThan(historyBytes);

      // Forks of the leaf and of its parent, made on a: each reads whole, from a and from b.
      const parentId = (leaf.basis as { response: string }).response;
      const forks = [turn(fromA, 100), turn(fromA, 101), turn((await a.responses.get(parentId))!, 102)];
      for (const fork of forks) await a.responses.save(fork);
      for (const fork of [...forks, leaf]) {
        expect((await a.responses.get(fork.response.id))!.input).toEqual(fork.input);
        expect((await b.responses.get(fork.response.id))!.input).toEqual(fork.input);
      }

      // What a caller got cannot be changed under the next reader.
      const got = (await a.responses.get(leaf.response.id))!;
      expect(() => ((got.input[3] as { content: string }).content = "changed")).toThrow(TypeError);
      expect((await a.responses.get(leaf.response.id))!.input).toEqual(leaf.input);

      // b rewrites the leaf (another output, another owner) and an ancestor's own turn: a reads what b wrote.
      const rewritten = { ...leaf, owner: "team-b", response: { ...leaf.response, output: [{ id: "msg_rewritten", type: "message", role: "assistant", status: "completed", content: [] }] } } as StoredResponse;
      await b.responses.save(rewritten);
      const afterRewrite = (await a.responses.get(leaf.response.id))!;
      expect(afterRewrite.owner).toBe("team-b");
      expect(afterRewrite.response.output).toEqual(rewritten.response.output);
      expect(afterRewrite.input).toEqual(leaf.input);
      const ancestor = (await b.responses.get(parentId))!;
      const changed = { ...ancestor, input: [...ancestor.input.slice(0, -1), { id: "msg_new_turn", type: "message", role: "user", content: "rewritten" }] } as StoredResponse;
      await b.responses.save(changed);
      const expected = [...changed.input, ...changed.response.output, ...leaf.input.slice(-1)];
      expect((await a.responses.get(leaf.response.id))!.input).toEqual(expected);

      // b deletes the leaf: a answers null at once; its parent still reads whole.
      expect(await b.responses.delete(leaf.response.id)).toBe(true);
      expect(await a.responses.get(leaf.response.id)).toBeNull();
      expect((await a.responses.get(parentId))!.input).toEqual(changed.input);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("the history an instance holds expires with the chain, and never a conversation's items (they can be deleted one by one)", async () => {
    const p = prefix();
    const a = await createStores(config(redis.url, p, 400));
    try {
      const leaf = await saveChain(a, 5);
      expect((await a.responses.get(leaf.response.id))!.input).toEqual(leaf.input);
      await sleep(600);
      expect(await a.responses.get(leaf.response.id)).toBeNull();

      // A chain whose first turn was made in a conversation: its history starts with the conversation's items.
      const conv = randomId("conv");
      const items: Item[] = [1, 2].map((n) => ({ id: `msg_c${n}`, type: "message", role: "user", content: `c${n}` }));
      await a.conversations.create({ conversation: { id: conv, object: "conversation", created_at: 1, metadata: {} }, owner: null, endpoint: null }, items);
      const id = idInChain(randomId, conv);
      const own: Item = { id: randomId("msg"), type: "message", role: "user", content: "turn" };
      const root: StoredResponse = { response: makeResponse(id), input: [...items, own], owner: null, basis: { conversation: conv, at: 2, items: 2 } };
      await a.conversations.append(conv, [own, ...root.response.output]);
      await a.responses.save(root);
      const next = turn((await a.responses.get(id))!, 1);
      await a.responses.save(next);
      expect((await a.responses.get(next.response.id))!.input.map((i) => i.id)).toContain("msg_c1");
      expect(await a.conversations.deleteItem(conv, "msg_c1")).toBeTruthy();
      expect((await a.responses.get(next.response.id))!.input.map((i) => i.id)).not.toContain("msg_c1");
    } finally {
      await a.close();
    }
  });

  it("leaves no key behind: deleting every response of a chain (forks too) empties it; a chain left alone expires whole", async () => {
    const p = prefix();
    const stores = await createStores(config(redis.url, p, 500));
    try {
      const last = await saveChain(stores, 10);
      const fork = turn((await stores.responses.get(last.basis && "response" in last.basis ? last.basis.response : ""))!, 99);
      await stores.responses.save(fork);
      await stores.responses.save(last); // written again: the chain counts a rewrite, which goes with the last record too
      const hash = (await raw.keys(`${p}chain:*`)).find((k) => !k.endsWith(":leaves"))!;
      expect(await raw.hget(hash, ":rewrites")).toBe("1");
      // Deleting from the root down: each is a tombstone until its last descendant goes.
      let rec: StoredResponse | null = (await stores.responses.get(last.response.id))!;
      const ids: string[] = [];
      while (rec) {
        ids.unshift(rec.response.id);
        const parentId: string | null = rec.basis && "response" in rec.basis ? rec.basis.response : null;
        rec = parentId ? { ...rec, response: { ...rec.response, id: parentId }, basis: undefined } : null;
        if (parentId) rec = (await stores.responses.get(parentId)) ?? rec;
      }
      for (const id of ids) expect(await stores.responses.delete(id)).toBe(true);
      expect(await raw.hlen(hash)).toBeGreaterThan(0); // the fork still needs the first nine
      expect(await stores.responses.get(fork.response.id)).not.toBeNull();
      expect(await stores.responses.delete(fork.response.id)).toBe(true);
      expect(await raw.hlen(hash)).toBe(0);
      expect(await raw.zcard(`${hash}:leaves`)).toBe(0);

      // A chain nobody touches again: everything under the prefix is gone after the TTL.
      await saveChain(stores, 5);
      await sleep(700);
      const left = (await raw.keys(`${p}*`)).filter((k) => !k.startsWith(`${p}bull:`)); // the job queue's own
      expect(left, JSON.stringify(await Promise.all(left.map((k) => raw.pttl(k))))).toEqual([]);
    } finally {
      await stores.close();
    }
  });

  it("a fork nobody continues is dropped soon after it expires, while the chain it left goes on", async () => {
    const p = prefix();
    const stores = await createStores(config(redis.url, p, 400));
    try {
      const a = turn(null, 0);
      await stores.responses.save(a);
      const dead = turn(a, 1);
      await stores.responses.save(dead);
      let parent = a;
      // The main line keeps writing past the fork's expiry.
      for (let i = 0; i < 6; i++) {
        await sleep(120);
        const next = turn(parent, 10 + i);
        await stores.responses.save(next);
        parent = next;
      }
      const hash = (await raw.keys(`${p}chain:*`)).find((k) => !k.endsWith(":leaves"))!;
      expect(await raw.hexists(hash, `${dead.response.id}:i`)).toBe(0);
      expect((await stores.responses.get(parent.response.id))!.input).toEqual(parent.input);
    } finally {
      await stores.close();
    }
  });

  it("a chain started on the previous release (full input under resp:<id>) continues; that release finds nothing under its keys for the new records", async () => {
    const p = prefix();
    const stores = await createStores(config(redis.url, p));
    try {
      // What the previous release wrote: the whole input in one JSON string, and its item index.
      const old = turn(turn(null, 0), 1);
      const legacy = { response: old.response, input: old.input, owner: old.owner };
      await raw.set(`${p}resp:${old.response.id}`, JSON.stringify(legacy), "PX", 60_000);
      await raw.set(`${p}item:${old.input[0]!.id}`, old.response.id, "PX", 60_000);
      const got = (await stores.responses.get(old.response.id))!;
      expect(got).toEqual(legacy);
      expect((await stores.responses.findItem(old.input[0]!.id as string))?.item).toEqual(old.input[0]);
      // The next turns: the first is stored whole (its parent is not in a chain), then each adds its own.
      const next = turn(got, 2);
      await stores.responses.save(next);
      const after = turn((await stores.responses.get(next.response.id))!, 3);
      await stores.responses.save(after);
      expect((await stores.responses.get(after.response.id))!.input).toEqual(after.input);
      expect((await stores.responses.get(after.response.id))!.basis).toEqual({ response: next.response.id, items: next.input.length + 1 });
      // The previous release reads resp:<id> and item:<id> only: it answers 404 for the new ones.
      expect(await raw.exists(`${p}resp:${after.response.id}`, `${p}resp:${next.response.id}`, `${p}item:${after.input.at(-1)!.id}`)).toBe(0);
      expect(await stores.responses.delete(old.response.id)).toBe(true);
      expect(await raw.exists(`${p}resp:${old.response.id}`)).toBe(0);
    } finally {
      await stores.close();
    }
  });

  it("a conversation of the previous release is read as it is and moved to the new layout on its first write", async () => {
    const p = prefix();
    const stores = await createStores(config(redis.url, p));
    try {
      const id = randomId("conv");
      const items = [{ id: randomId("msg"), type: "message", role: "user", content: "old" }];
      await raw.hset(`${p}conv:{${id}}`, "record", JSON.stringify({ conversation: { id, object: "conversation", created_at: 1, metadata: {} }, owner: null }), "endpoint", "");
      await raw.rpush(`${p}conv:{${id}}:items`, JSON.stringify(items[0]));
      expect(await stores.conversations.items(id)).toEqual(items);
      const more = { id: randomId("msg"), type: "message", role: "user", content: "new" };
      expect(await stores.conversations.append(id, [more])).toBe(true);
      expect(await stores.conversations.items(id)).toEqual([...items, more]);
      expect(await raw.exists(`${p}conv:{${id}}`)).toBe(0);
      expect((await stores.conversations.findItem(more.id))?.item).toEqual(more);
    } finally {
      await stores.close();
    }
  });

  it("a response made in a conversation keeps no second copy of its turn's input: the conversation holds it, the record links past it", async () => {
    const p = prefix();
    const stores = await createStores(config(redis.url, p));
    try {
      const convId = randomId("conv");
      const first: Item = { id: randomId("msg"), type: "message", role: "user", content: "c1" };
      await stores.conversations.create({ conversation: { id: convId, object: "conversation", created_at: 1, metadata: {} }, owner: "team-a", endpoint: null }, [first]);
      // A turn as the router makes it: read the history, append the turn's input and output, then store the response.
      const conversationTurn = async (content: string) => {
        const history = (await stores.conversations.history(convId))!;
        const id = idInChain(randomId, convId);
        const own: Item = { id: randomId("msg"), type: "message", role: "user", content };
        const record: StoredResponse = { response: makeResponse(id), input: [...history.items, own], owner: "team-a", basis: { conversation: convId, at: history.at, items: history.items.length } };
        return { record, own, append: () => stores.conversations.append(convId, [own, ...record.response.output]) };
      };
      const t = await conversationTurn("y".repeat(4_000));
      await t.append();
      await stores.responses.save(t.record);
      const { hash } = chainKeys(p, chainTag(t.record.response.id));
      expect(await raw.hstrlen(hash, `${t.record.response.id}:i`)).toBeLessThan(100);
      expect((await stores.responses.get(t.record.response.id))!.input).toEqual(t.record.input);
      const index = (await stores.responses.inputIndex(t.record.response.id))!;
      expect(index.ids).toEqual(t.record.input.map((i) => i.id));
      expect(await index.load([1, 0])).toEqual([t.own, first]);
      // A child by previous_response_id (out of the conversation) sees the same history, then its own turn.
      const child = turn((await stores.responses.get(t.record.response.id))!, 1);
      await stores.responses.save(child);
      expect((await stores.responses.get(child.response.id))!.input).toEqual([...t.record.input, ...t.record.response.output, child.input.at(-1)]);
      // The input item is still found by id (an item_reference), with its owner, where the conversation keeps it.
      expect(await stores.responses.findItem(t.own.id as string)).toEqual({ item: t.own, owner: "team-a" });
      expect(await stores.conversations.findItem(t.own.id as string)).toEqual({ item: t.own, owner: "team-a" });
      // A turn whose input is not what follows its basis in the conversation (another turn appended between its read and its store) keeps its own copy.
      const [slow, fast] = [await conversationTurn("slow"), await conversationTurn("fast")];
      await fast.append();
      await slow.append();
      await stores.responses.save(slow.record);
      expect((await stores.responses.get(slow.record.response.id))!.input).toEqual(slow.record.input);
      expect((await stores.responses.get(slow.record.response.id))!.input.map((i) => i.content)).toEqual(["c1", "y".repeat(4_000), [{ type: "output_text", text: "hi", annotations: [] }], "slow"]);
      // The conversation deleted, the response still needs its items: they stay, found by id through the response.
      expect(await stores.conversations.delete(convId)).toBe(true);
      expect((await stores.responses.get(t.record.response.id))!.input).toEqual(t.record.input);
      expect(await stores.responses.findItem(t.own.id as string)).toEqual({ item: t.own, owner: "team-a" });
    } finally {
      await stores.close();
    }
  });
});
