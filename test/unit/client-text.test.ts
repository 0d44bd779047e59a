import { describe, expect, it } from "vitest";
import { clientText, hasHiddenParts } from "../../src/translate/openai/rewrite.js";

// The rule as a replacer (what the router serialised with before): the reference the fast path must match byte for byte.
function reference(hide: boolean, hideSources: boolean) {
  return function (this: unknown, key: string, value: unknown): unknown {
    const type = (this as { type?: unknown } | null)?.type;
    if (hide && key === "encrypted_content" && type === "reasoning") return undefined;
    if (hideSources && key === "sources" && type === "search") return undefined;
    return value;
  };
}

const reasoning = { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "why" }], encrypted_content: "gAAAA" };
const compaction = { id: "cmp_1", type: "compaction", encrypted_content: "kept" };
const search = { id: "ws_1", type: "web_search_call", status: "completed", action: { type: "search", query: "q", sources: [{ type: "url", url: "https://example.com" }] } };
const message = { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "hi", annotations: [], logprobs: [] }] };
const response = (output: unknown[]) => ({ id: "resp_1", object: "response", status: "completed", output, usage: null, metadata: {} });

const cases: Record<string, unknown> = {
  "a delta event": { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "hi", logprobs: [], sequence_number: 4 },
  "a message item event": { type: "response.output_item.done", output_index: 0, item: message, sequence_number: 9 },
  "a reasoning item event": { type: "response.output_item.done", output_index: 0, item: reasoning, sequence_number: 3 },
  "reasoning whose encrypted_content is null": { type: "response.output_item.added", output_index: 0, item: { ...reasoning, encrypted_content: null }, sequence_number: 2 },
  "a compaction item (its encrypted_content is its content)": { type: "response.output_item.done", output_index: 0, item: compaction, sequence_number: 2 },
  "a response with reasoning, a search and a message": response([reasoning, search, message]),
  "a completed event's snapshot": { type: "response.completed", response: response([compaction, reasoning, message]), sequence_number: 12 },
  "a response with nothing to hide": response([compaction, message]),
  "a search item event": { type: "response.output_item.done", output_index: 1, item: search, sequence_number: 7 },
};

describe("clientText", () => {
  for (const [name, value] of Object.entries(cases)) {
    it(`writes the replacer's bytes: ${name}`, () => {
      for (const [hide, hideSources] of [[false, false], [true, false], [false, true], [true, true]] as const) {
        expect(clientText(value, hide, hideSources)).toBe(JSON.stringify(value, reference(hide, hideSources)));
      }
    });
  }

  it("hides encrypted reasoning and sources and keeps a compaction item's content", () => {
    const out = JSON.parse(clientText(response([reasoning, compaction, search]), true, true)) as { output: Record<string, unknown>[] };
    expect(out.output[0]).not.toHaveProperty("encrypted_content");
    expect(out.output[1]!.encrypted_content).toBe("kept");
    expect(out.output[2]!.action).toEqual({ type: "search", query: "q" });
  });

  it("finds what is hidden at any depth, and only when it is asked to hide it", () => {
    expect(hasHiddenParts(cases["a completed event's snapshot"], true, false)).toBe(true);
    expect(hasHiddenParts(cases["a completed event's snapshot"], false, true)).toBe(false);
    expect(hasHiddenParts(cases["a search item event"], false, true)).toBe(true);
    expect(hasHiddenParts(cases["a response with nothing to hide"], true, true)).toBe(false);
    expect(hasHiddenParts([[{ x: { type: "reasoning", encrypted_content: "" } }]], true, false)).toBe(true);
  });
});
