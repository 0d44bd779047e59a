import { describe, expect, it } from "vitest";
import { emitted, numbered } from "../../src/wire/emitted.js";
import { responseSkeleton } from "../../src/translate/skeleton.js";
import type { EmittedResponse } from "../../src/wire/types.js";

/**
 * Events and objects the router builds are checked by tsc against the openai package's
 * types: the `@ts-expect-error` lines below fail `npm test` (tsc) if a required field could
 * go missing or take a wrong type without an error.
 */
describe("emitted events are typed by the openai package", () => {
  it("a missing or mistyped required field does not compile", () => {
    const at = { item_id: "msg_1", output_index: 0, content_index: 0 };
    // @ts-expect-error logprobs is required on response.output_text.done
    const missing = emitted({ type: "response.output_text.done", ...at, text: "hi", sequence_number: 3 });
    // @ts-expect-error code must be a string or null
    const wrong = numbered({ type: "error", code: 5, message: "m", param: null }, 4);
    // @ts-expect-error a Response needs its required fields (tools, tool_choice, ...)
    const partial: EmittedResponse = { id: "resp_1", object: "response", created_at: 1, status: "queued", error: null, incomplete_details: null, model: "m", output: [], usage: null, store: true };
    const ok = emitted({ type: "response.output_text.done", ...at, text: "hi", logprobs: [], sequence_number: 5 });
    expect([missing.type, wrong.type, partial.id, ok.sequence_number]).toEqual(["response.output_text.done", "error", "resp_1", 5]);
  });

  it("the skeleton satisfies the package's Response type (minus the SDK-only output_text)", () => {
    const skeleton = responseSkeleton({ model: "m" }, { id: "resp_1", createdAt: 1, model: "m", status: "queued" });
    const typed = skeleton as unknown as EmittedResponse;
    const created = emitted({ type: "response.created", response: typed, sequence_number: 0 });
    expect(created).toMatchObject({ type: "response.created", response: { id: "resp_1", status: "queued", text: { verbosity: "medium" } } });
  });
});
