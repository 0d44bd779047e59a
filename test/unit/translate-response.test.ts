import { describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/wire/ids.js";
import { responsesToChatRequest } from "../../src/translate/chat/request.js";
import { chatCompletionToResponse, chatMessageToOutputItems, chatUsageToResponses } from "../../src/translate/chat/response.js";
import { completedAt, emptyUsage, outputText, responseSkeleton } from "../../src/translate/skeleton.js";
import type { CreateResponseRequest } from "../../src/wire/types.js";

/** The translators' clock: when a response completes (`completed_at`). */
const CLOCK = () => 1_700_000_100;

const meta = { id: "resp_1", createdAt: 1700000000, model: "my-model", status: "in_progress" as const };

describe("responseSkeleton", () => {
  it("has every field the protocol lists, with defaults", () => {
    const r = responseSkeleton({ model: "upstream-name" }, meta);
    expect(r).toEqual({
      id: "resp_1",
      object: "response",
      created_at: 1700000000,
      status: "in_progress",
      completed_at: null,
      background: false,
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      max_tool_calls: null,
      metadata: {},
      model: "my-model",
      output: [],
      parallel_tool_calls: true,
      previous_response_id: null,
      presence_penalty: 0,
      frequency_penalty: 0,
      prompt_cache_key: null,
      reasoning: { effort: null, summary: null },
      safety_identifier: null,
      service_tier: "auto",
      store: true,
      temperature: 1,
      text: { format: { type: "text" }, verbosity: "medium" },
      tool_choice: "auto",
      tools: [],
      top_logprobs: 0,
      top_p: 1,
      truncation: "disabled",
      usage: null,
      access_programs: null,
    });
    expect(r).not.toHaveProperty("output_text");
    expect(r).not.toHaveProperty("user");
  });

  it("echoes what the client sent", () => {
    const req: CreateResponseRequest = {
      model: "m", instructions: "be brief", tools: [{ type: "function", name: "f" }], tool_choice: "required", temperature: 0.3, top_p: 0.5,
      metadata: { k: "v" }, store: false, background: true, max_output_tokens: 50, text: { format: { type: "json_object" } },
      reasoning: { effort: "high" }, truncation: "auto", user: "u", parallel_tool_calls: false,
    };
    const r = responseSkeleton(req, { ...meta, previousResponseId: "resp_0", status: "queued" });
    expect(r).toMatchObject({
      instructions: "be brief", tools: req.tools, tool_choice: "required", temperature: 0.3, top_p: 0.5, metadata: { k: "v" },
      store: false, background: true, max_output_tokens: 50, text: { format: { type: "json_object" } },
      reasoning: { effort: "high", summary: null }, truncation: "auto", user: "u", parallel_tool_calls: false,
      previous_response_id: "resp_0", status: "queued",
    });
  });

  it("echoes the penalties asked for, 0 otherwise", () => {
    expect(responseSkeleton({ model: "m", presence_penalty: 0.5, frequency_penalty: -1.25 }, meta)).toMatchObject({ presence_penalty: 0.5, frequency_penalty: -1.25 });
    expect(responseSkeleton({ model: "m", presence_penalty: null, frequency_penalty: null }, meta)).toMatchObject({ presence_penalty: 0, frequency_penalty: 0 });
  });

  it("completed_at: null unless made completed, then the time given (by default its created_at)", () => {
    for (const status of ["queued", "in_progress", "incomplete", "failed", "cancelled"] as const) {
      expect(responseSkeleton({ model: "m" }, { ...meta, status, completedAt: 1_700_000_050 }).completed_at).toBeNull();
    }
    expect(responseSkeleton({ model: "m" }, { ...meta, status: "completed", completedAt: 1_700_000_050 }).completed_at).toBe(1_700_000_050);
    expect(responseSkeleton({ model: "m" }, { ...meta, status: "completed" }).completed_at).toBe(1700000000);
  });
});

describe("completedAt", () => {
  it("reads the clock only for a completed response", () => {
    let reads = 0;
    const clock = () => {
      reads++;
      return 42;
    };
    expect(completedAt("completed", clock)).toBe(42);
    for (const status of ["queued", "in_progress", "incomplete", "failed", "cancelled"]) expect(completedAt(status, clock)).toBeNull();
    expect(reads).toBe(1);
  });
});

describe("chatMessageToOutputItems", () => {
  it("text -> one assistant message item", () => {
    const items = chatMessageToOutputItems({ role: "assistant", content: "hi there" }, sequentialIds());
    expect(items).toEqual([
      { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "hi there", annotations: [], logprobs: [] }] },
    ]);
  });

  it("tool call -> function_call item (no message when content is null)", () => {
    const items = chatMessageToOutputItems({ role: "assistant", content: null, tool_calls: [{ id: "c9", function: { name: "f", arguments: "{}" } }] }, sequentialIds());
    expect(items).toEqual([{ id: "fc_1", type: "function_call", status: "completed", call_id: "c9", name: "f", arguments: "{}" }]);
  });

  it("reasoning first, then text + refusal, then calls; namespaced names map back", () => {
    const { toolNames } = responsesToChatRequest(
      { model: "m", tools: [{ type: "namespace", name: "crm", description: "", tools: [{ type: "function", name: "lookup" }] }] },
      [],
      { upstreamModel: "u", stream: false, developerRole: "system", hostedTools: "drop" },
    );
    const items = chatMessageToOutputItems(
      { role: "assistant", reasoning: "why", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }], refusal: "no", tool_calls: [{ function: { name: "crm__lookup", arguments: null } }] },
      sequentialIds(),
      toolNames,
    );
    expect(items.map((i) => i.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(items[0]).toEqual({ id: "rs_1", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "why" }] });
    expect(items[1]!.content).toEqual([{ type: "output_text", text: "ab", annotations: [], logprobs: [] }, { type: "refusal", refusal: "no" }]);
    expect(items[2]).toMatchObject({ name: "lookup", namespace: "crm", arguments: "" });
    expect(String(items[2]!.call_id)).toMatch(/^call_/);
  });
});

describe("chatUsageToResponses", () => {
  it("maps tokens incl. cached and reasoning details", () => {
    expect(chatUsageToResponses({ prompt_tokens: 7, completion_tokens: 5, total_tokens: 12, prompt_tokens_details: { cached_tokens: 2 }, completion_tokens_details: { reasoning_tokens: 3 } })).toEqual({
      input_tokens: 7, input_tokens_details: { cached_tokens: 2, cache_write_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 3 }, total_tokens: 12,
    });
  });
  it("defaults to integer zeros and computes a missing total", () => {
    expect(chatUsageToResponses({ prompt_tokens: 7, completion_tokens: 3 })).toEqual({ ...emptyUsage(), input_tokens: 7, output_tokens: 3, total_tokens: 10 });
    expect(chatUsageToResponses(null)).toEqual(emptyUsage());
    expect(chatUsageToResponses({ prompt_tokens: 2.7, completion_tokens: Number.NaN, prompt_tokens_details: null })).toMatchObject({ input_tokens: 2, output_tokens: 0, total_tokens: 2 });
  });
});

describe("chatCompletionToResponse", () => {
  const skeleton = () => responseSkeleton({ model: "m" }, meta);

  it("builds a completed response with output, usage and logprobs", () => {
    const r = chatCompletionToResponse(
      {
        choices: [{ message: { role: "assistant", content: "abc" }, finish_reason: "stop", logprobs: { content: [{ token: "abc", logprob: -0.1, bytes: null, top_logprobs: [{ token: "abc", logprob: -0.1 }] }] } }],
        usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
      },
      skeleton(),
      sequentialIds(), CLOCK,
    );
    expect(r.status).toBe("completed");
    expect(r.completed_at).toBe(1_700_000_100);
    expect(r.id).toBe("resp_1");
    expect(outputText(r)).toBe("abc");
    expect(r.usage).toMatchObject({ input_tokens: 3, output_tokens: 5, total_tokens: 8 });
    expect((r.output[0]!.content as { logprobs: unknown }[])[0]!.logprobs).toEqual([{ token: "abc", logprob: -0.1, bytes: [], top_logprobs: [{ token: "abc", logprob: -0.1, bytes: [] }] }]);
  });

  it("finish_reason length -> incomplete max_output_tokens; content_filter -> content_filter", () => {
    const r = chatCompletionToResponse({ choices: [{ message: { content: "tru" }, finish_reason: "length" }] }, skeleton(), sequentialIds(), CLOCK);
    expect(r).toMatchObject({ status: "incomplete", completed_at: null, incomplete_details: { reason: "max_output_tokens" } });
    expect(r.output[0]!.status).toBe("incomplete");
    const f = chatCompletionToResponse({ choices: [{ message: { content: "" }, finish_reason: "content_filter" }] }, skeleton(), sequentialIds(), CLOCK);
    expect(f).toMatchObject({ status: "incomplete", incomplete_details: { reason: "content_filter" }, output: [] });
  });

  it("tool_calls finish -> completed function_call output; the skeleton is not mutated", () => {
    const sk = skeleton();
    const r = chatCompletionToResponse({ choices: [{ message: { content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] }, finish_reason: "tool_calls" }] }, sk, sequentialIds(), CLOCK);
    expect(r.status).toBe("completed");
    expect(r.output).toHaveLength(1);
    expect(sk.output).toEqual([]);
    expect(sk.status).toBe("in_progress");
  });
});
