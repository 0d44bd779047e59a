import { describe, expect, it } from "vitest";
import { recordJson } from "../../src/store/record-json.js";
import { MemoryResponseCache, MemoryResponseStore } from "../../src/store/memory/responses.js";
import { responseSkeleton } from "../../src/translate/index.js";
import type { StoredResponse } from "../../src/store/types.js";

const response = () => {
  const r = responseSkeleton({ model: "m", input: "hi" }, { id: "resp_1", createdAt: 1, model: "m", status: "completed", previousResponseId: null });
  r.output = [{ id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "héllo \"q\" \u2028", annotations: [], logprobs: [] }] }];
  return r;
};

describe("recordJson: a record around a response serialised once", () => {
  it("makes the bytes JSON.stringify makes, with and without the optional fields", () => {
    const records: StoredResponse[] = [
      { response: response(), input: [{ id: "msg_0", type: "message", role: "user", content: "hi" }], owner: null, endpoint: "ep" },
      { response: response(), input: [], owner: "team-a", endpoint: undefined },
      { response: response(), input: [], owner: null },
    ];
    for (const r of records) {
      expect(recordJson(r, JSON.stringify(r.response))).toBe(JSON.stringify(r));
      expect(recordJson(r)).toBe(JSON.stringify(r));
    }
    const cached = { response: response() };
    expect(recordJson(cached, JSON.stringify(cached.response))).toBe(JSON.stringify(cached));
  });

  it("the memory store and cache keep what the response's JSON says and read back the same objects", async () => {
    const store = new MemoryResponseStore({ maxEntries: 10, maxBytes: 1e6, ttlMs: 60_000 });
    const record: StoredResponse = { response: response(), input: [], owner: null, endpoint: "ep" };
    await store.save(record, JSON.stringify(record.response));
    expect(await store.get("resp_1")).toEqual(JSON.parse(JSON.stringify(record)));
    // What it holds: the response (its output kept apart), the output, the input, their ids, the response id.
    expect(store.bytes).toBe(JSON.stringify({ ...record.response, output: [] }).length + JSON.stringify(record.response.output).length + "[]".length + JSON.stringify({ i: [], o: record.response.output.map((i) => i.id ?? "") }).length + "resp_1".length);
    const cache = new MemoryResponseCache({ maxEntries: 10, maxBytes: 1e6 });
    await cache.set("k", { response: record.response }, 60_000, JSON.stringify(record.response));
    expect(await cache.get("k")).toEqual({ response: JSON.parse(JSON.stringify(record.response)) });
  });
});
