import { describe, expect, it, vi } from "vitest";
import { RoundSink, type Cite } from "../../src/responses/tool-loop/round-sink.js";
import type { HostedFunction, Toolbox } from "../../src/responses/tool-loop/toolbox.js";
import { sendEvents } from "../../src/responses/adapters/adapter.js";
import { ChatStreamTranslator } from "../../src/translate/chat/stream.js";
import type { ChatChunkLike } from "../../src/translate/chat/chat-types.js";
import { responseSkeleton } from "../../src/translate/skeleton.js";
import { EventJson } from "../../src/wire/event-json.js";
import { sequentialIds } from "../../src/wire/ids.js";
import type { StreamEvent } from "../../src/wire/types.js";

const echo = { kind: "mcp", name: "bench__echo", server: { label: "bench" }, tool: { name: "echo" }, approval: false } as unknown as HostedFunction;
const toolbox = { get: (name: string) => (name === "bench__echo" ? echo : undefined) } as unknown as Toolbox;
const cite: Cite = (text) => (text.includes("docs") ? [{ type: "url_citation", url: "https://example.com/docs", title: "Docs", start_index: 0, end_index: 4 }] : []);

const content = (c: string): ChatChunkLike => ({ choices: [{ index: 0, delta: { content: c } }] });
const call = (args: string, id?: string): ChatChunkLike => ({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, ...(id ? { id, function: { name: "bench__echo", arguments: args } } : { function: { arguments: args } }) }] } }] });

/** A round as the chat translator streams it to the sink: lifecycle, a text answer, a hosted tool call (the terminal event is held back, not sent). */
function round(): StreamEvent[] {
  const skeleton = responseSkeleton({ model: "m", input: "hi" }, { id: "resp_1", createdAt: 1, model: "m", status: "in_progress" });
  const t = new ChatStreamTranslator(skeleton, sequentialIds(), () => 2);
  const events = [...t.start()];
  for (const c of [content("see the "), content("docs \"here\""), call('{"text":', "call_1"), call('"bench"}'), { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] } as ChatChunkLike]) events.push(...t.push(c));
  const tail = t.finish();
  expect(tail.pop()!.type).toBe("response.completed");
  return [...events, ...tail];
}

/** What a sink after `base` earlier items writes for the round, given each event as text (`send`) or as the object (`sendEvents`). */
function written(events: StreamEvent[], way: "text" | "object", withCite: boolean): string[] {
  const out: string[] = [];
  const ids = sequentialIds();
  const sink = new RoundSink({ send: (type, data) => out.push(`${type} ${data}`) }, { next: 7 }, 2, toolbox, ids, withCite ? cite : null);
  const json = new EventJson();
  if (way === "object") sendEvents(sink, events, (ev) => json.text(ev));
  else for (const ev of events) sink.send(ev.type, json.text(ev));
  return out;
}

describe("RoundSink: a round's events taken as objects", () => {
  for (const withCite of [false, true]) {
    it(`writes the bytes it writes for their text, and changes none of them${withCite ? " (citations added)" : ""}`, () => {
      const events = round();
      const before = structuredClone(events);
      const asObjects = written(events, "object", withCite);
      expect(events).toEqual(before);
      expect(asObjects).toEqual(written(round(), "text", withCite));
      // The round's lifecycle events are dropped; its deltas, items and call continue the response's numbering.
      expect(asObjects.some((l) => l.startsWith("response.created") || l.startsWith("response.in_progress"))).toBe(false);
      expect(asObjects.map((l) => (JSON.parse(l.slice(l.indexOf(" ") + 1)) as StreamEvent).sequence_number)).toEqual(asObjects.map((_, i) => 7 + i));
      expect(asObjects.filter((l) => l.startsWith("response.mcp_call_arguments.done"))).toHaveLength(1);
      if (withCite) expect(asObjects.filter((l) => l.startsWith("response.output_text.annotation.added"))).toHaveLength(1);
    });
  }

  it("serialises none of the round's lifecycle events", () => {
    const serialise = vi.fn((ev: StreamEvent) => JSON.stringify(ev));
    const sink = new RoundSink({ send: () => {} }, { next: 0 }, 0, toolbox, sequentialIds(), null);
    sendEvents(sink, round(), serialise);
    const types = serialise.mock.calls.map(([ev]) => ev.type);
    expect(types.length).toBeGreaterThan(0);
    expect(types.filter((t) => t === "response.created" || t === "response.in_progress")).toEqual([]);
  });
});
