import { describe, expect, it } from "vitest";
import { notFound } from "../../src/ops/errors.js";
import { connectionLimitReached, errorEvent, withStreamId } from "../../src/ws/events.js";
import { RecentResponses } from "../../src/ws/recent.js";
import type { StoredResponse } from "../../src/store/types.js";

describe("WebSocket messages", () => {
  it("tags a serialized event with its lane without reparsing it, and leaves lane-less events alone", () => {
    const data = JSON.stringify({ type: "response.output_text.delta", delta: "}", sequence_number: 3 });
    expect(JSON.parse(withStreamId(data, "lane-1"))).toEqual({ type: "response.output_text.delta", delta: "}", sequence_number: 3, stream_id: "lane-1" });
    expect(withStreamId(data, undefined)).toBe(data);
    expect(JSON.parse(withStreamId('{"type":"x"}', 'a"b'))).toEqual({ type: "x", stream_id: 'a"b' });
  });

  it("renders an ApiError as OpenAI's WebSocket error event", () => {
    expect(JSON.parse(errorEvent(notFound("nope", "previous_response_id", "previous_response_not_found"), "s"))).toEqual({
      type: "error",
      status: 400,
      error: { type: "invalid_request_error", code: "previous_response_not_found", message: "nope", param: "previous_response_id" },
      stream_id: "s",
    });
    expect(connectionLimitReached(3_600_000).message).toBe("Responses websocket connection limit reached (60 minutes). Create a new websocket connection to continue.");
    expect(connectionLimitReached(400).message).toContain("(400 ms)");
  });

  it("keeps a connection's newest responses, bounded", () => {
    const recent = new RecentResponses(2);
    const rec = (id: string) => ({ response: { id }, input: [], owner: null }) as unknown as StoredResponse;
    recent.add(rec("a"));
    recent.add(rec("b"));
    recent.add(rec("a")); // touched again: now the newest
    recent.add(rec("c"));
    expect(recent.get("b")).toBeUndefined();
    expect(recent.get("a")?.response.id).toBe("a");
    expect(recent.get("c")?.response.id).toBe("c");
    expect(recent.size).toBe(2);
  });
});
