/**
 * Stream events the router builds itself, checked at compile time against the openai
 * package's own event types: `emitted({ type: "response.output_text.done", ... })` fails
 * tsc when a field OpenAI requires is missing or has the wrong type. The result is the
 * loose StreamEvent the rest of the router (sinks, the event log) passes along.
 */
import type { EmittedEvent, StreamEvent } from "./types.js";

export type EmittedOf<T extends EmittedEvent["type"]> = Extract<EmittedEvent, { type: T }>;

export function emitted<T extends EmittedEvent["type"]>(event: EmittedOf<T>): StreamEvent {
  return event as unknown as StreamEvent;
}

type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An emitted event before it is numbered. */
export type EmittedFields = OmitEach<EmittedEvent, "sequence_number">;

/** Numbers an event built from checked fields: `{ ...fields, sequence_number }`, `type` first. */
export function numbered(fields: EmittedFields, sequenceNumber: number): StreamEvent {
  return { ...fields, sequence_number: sequenceNumber } as unknown as StreamEvent;
}
