import type { StoredResponse } from "../../src/store/index.js";
import type { ResponseObject, StreamEvent } from "../../src/wire/types.js";

/** Small builders and waiting helpers shared by the store tests. */
let counter = 0;
export const newId = () => `resp_${process.pid}_${Date.now().toString(36)}_${++counter}`;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function makeResponse(id: string, overrides: Partial<ResponseObject> = {}): ResponseObject {
  return {
    id,
    object: "response",
    created_at: 1_700_000_000,
    status: "completed",
    error: null,
    incomplete_details: null,
    model: "test-model",
    output: [{ id: `msg_${id}`, type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "hi", annotations: [] }] }],
    usage: null,
    ...overrides,
  };
}

export function makeRecord(id: string, text = "hello"): StoredResponse {
  return { response: makeResponse(id), input: [{ id: `item_${id}`, type: "message", role: "user", content: text }], owner: "team-a" };
}

export function ev(seq: number, type = "response.output_text.delta", extra: Record<string, unknown> = {}): StreamEvent {
  return { type, sequence_number: seq, delta: `d${seq}`, ...extra };
}

export async function collect(iter: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const e of iter) out.push(e);
  return out;
}

/** Polls until check() is truthy or the timeout passes. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Resolves when the signal aborts. */
export const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));
