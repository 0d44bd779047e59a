import { expect, it } from "vitest";
import { randomId } from "../../src/wire/ids.js";
import { idInChain } from "../../src/store/chain.js";
import type { StoredResponse, Stores } from "../../src/store/index.js";
import type { Item } from "../../src/wire/types.js";
import { makeResponse, sleep } from "./support.js";

/** Opens fresh stores (a TTL when given). */
export type Open = (opts?: { ttlMs?: number }) => Promise<Stores>;

const turnText = (i: number) => `turn ${i} ` + "x".repeat(200);

/** A turn built on `parent` (a record as the store gave it back, or null for a root), the way the router builds one. */
export function turn(parent: StoredResponse | null, i: number, owner: string | null = "team-a"): StoredResponse {
  const id = idInChain(randomId, parent?.response.id ?? null);
  const history: Item[] = parent ? [...parent.input, ...parent.response.output] : [];
  const own: Item = { id: randomId("msg"), type: "message", role: "user", content: turnText(i) };
  const response = makeResponse(id, {
    previous_response_id: parent?.response.id ?? null,
    output: [{ id: randomId("msg"), type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: `answer ${i}`, annotations: [] }] }],
  } as never);
  const record: StoredResponse = { response, input: [...history, own], owner };
  if (parent) record.basis = { response: parent.response.id, items: history.length };
  return record;
}

/** Saves `n` turns in a row and returns what the store gives back for each. */
async function chain(stores: Stores, n: number, from: StoredResponse | null = null): Promise<StoredResponse[]> {
  const out: StoredResponse[] = [];
  let parent = from;
  for (let i = 0; i < n; i++) {
    const rec = turn(parent, i);
    await stores.responses.save(rec);
    parent = (await stores.responses.get(rec.response.id))!;
    expect(parent.input).toEqual(rec.input);
    out.push(parent);
  }
  return out;
}

/** The chain cases of the store contract: each item stored once, history whole at any depth, OpenAI's deletion and expiry. */
export function describeChainContract(open: Open): void {
  it("a chain's record at any depth comes back with its whole history, each turn stored once", async () => {
    const stores = await open();
    const turns = await chain(stores, 40);
    const last = turns.at(-1)!;
    expect(last.input).toHaveLength(40 + 39);
    expect(last.input.filter((i) => i.role === "user").map((i) => (i.content as string).split(" ")[1])).toEqual(Array.from({ length: 40 }, (_, i) => String(i)));
    expect(last.basis).toEqual({ response: turns.at(-2)!.response.id, items: 78 });
    // Each item is findable by id, in the record that added it, with its owner.
    const first = turns[0]!.input[0]!;
    expect(await stores.responses.findItem(first.id as string)).toEqual({ item: first, owner: "team-a" });
  });

  it("inputIndex: every item id in order, and any positions load the same items as the whole record, from the parts they fall in", async () => {
    const stores = await open();
    const turns = await chain(stores, 12);
    const last = turns.at(-1)!;
    const index = (await stores.responses.inputIndex(last.response.id))!;
    expect(index.owner).toBe("team-a");
    expect(index.ids).toEqual(last.input.map((i) => i.id));
    const at = [22, 0, 5, 21, 13];
    expect(await index.load(at)).toEqual(at.map((k) => last.input[k]));
    expect(await index.load([])).toEqual([]);
    expect(await stores.responses.inputIndex("resp_never_stored")).toBeNull();
    await stores.responses.delete(last.response.id);
    expect(await stores.responses.inputIndex(last.response.id)).toBeNull();
  });

  it("forks: two children of one parent each see the parent's history and their own turn only", async () => {
    const stores = await open();
    const [root, mid] = await chain(stores, 2);
    const left = turn(mid!, 10);
    const right = turn(mid!, 20);
    await stores.responses.save(left);
    await stores.responses.save(right);
    expect((await stores.responses.get(left.response.id))!.input).toEqual(left.input);
    expect((await stores.responses.get(right.response.id))!.input).toEqual(right.input);
    expect(root).toBeDefined();
  });

  it("a deleted response answers null while its descendants keep their whole history; nothing is kept once nobody needs it", async () => {
    const stores = await open();
    const turns = await chain(stores, 5);
    const [a, b, c, d, e] = turns.map((t) => t.response.id) as [string, string, string, string, string];
    expect(await stores.responses.delete(c)).toBe(true);
    expect(await stores.responses.get(c)).toBeNull();
    expect(await stores.responses.delete(c)).toBe(false);
    expect((await stores.responses.get(e))!.input).toEqual(turns[4]!.input);
    // A child of the last one still builds on the whole history, the deleted turn's items included.
    const next = turn(turns[4]!, 5);
    await stores.responses.save(next);
    expect((await stores.responses.get(next.response.id))!.input).toEqual(next.input);
    for (const id of [next.response.id, e, d, b, a]) expect(await stores.responses.delete(id)).toBe(true);
    for (const id of [a, b, c, d, e]) expect(await stores.responses.get(id)).toBeNull();
  });

  it("a record whose parent is gone (deleted and dropped, or never stored here) is saved whole", async () => {
    const stores = await open();
    const [a] = await chain(stores, 1);
    const child = turn(a!, 1);
    await stores.responses.delete(a!.response.id);
    await stores.responses.save(child);
    const got = (await stores.responses.get(child.response.id))!;
    expect(got.input).toEqual(child.input);
    expect(got.basis).toBeUndefined();
  });

  it("expiry: an ancestor past its TTL answers null but lives on for the descendants that need it, then goes with them", async () => {
    // Margins of 300 ms and more either side of each expiry, so a loaded machine cannot blur them.
    const stores = await open({ ttlMs: 1_500 });
    const [a] = await chain(stores, 1);
    await sleep(900);
    const [b] = await chain(stores, 1, a!);
    await sleep(900);
    // a expired, b did not: b's history still holds a's items.
    expect(await stores.responses.get(a!.response.id)).toBeNull();
    expect((await stores.responses.get(b!.response.id))!.input).toEqual(b!.input);
    await sleep(900);
    expect(await stores.responses.get(b!.response.id)).toBeNull();
  });

  it("a response made in a conversation links to its items; they outlive the conversation's deletion while it needs them", async () => {
    const stores = await open();
    const convId = randomId("conv");
    const items: Item[] = [1, 2, 3].map((n) => ({ id: randomId("msg"), type: "message", role: "user", content: `c${n}` }));
    await stores.conversations.create({ conversation: { id: convId, object: "conversation", created_at: 1, metadata: {} }, owner: null, endpoint: null }, items);
    const history = (await stores.conversations.history(convId))!;
    expect(history).toEqual({ items, at: 3 });
    const id = idInChain(randomId, convId);
    const own: Item = { id: randomId("msg"), type: "message", role: "user", content: "turn" };
    const record: StoredResponse = { response: makeResponse(id), input: [...items, own], owner: null, basis: { conversation: convId, at: 3, items: 3 } };
    await stores.conversations.append(convId, [own, ...record.response.output]);
    await stores.responses.save(record);
    expect((await stores.responses.get(id))!.input).toEqual(record.input);
    const index = (await stores.responses.inputIndex(id))!;
    expect(index.ids).toEqual(record.input.map((i) => i.id));
    expect(await index.load([3, 1])).toEqual([record.input[3], record.input[1]]);
    // A deleted item leaves its place: the conversation's positions never move.
    expect(await stores.conversations.deleteItem(convId, items[0]!.id as string)).toBe(true);
    expect((await stores.conversations.history(convId))!.at).toBe(5);
    expect((await stores.responses.get(id))!.input).toEqual(record.input.slice(1));
    expect(await stores.conversations.delete(convId)).toBe(true);
    expect(await stores.conversations.get(convId)).toBeNull();
    expect((await stores.responses.get(id))!.input).toEqual(record.input.slice(1));
    expect(await stores.responses.delete(id)).toBe(true);
  });
}
