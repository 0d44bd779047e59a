/**
 * SSE writing: the sink stream events are sent through, and the text/event-stream bodies
 * built on it. Below the HTTP layer so services can build bodies without importing http/.
 *
 * A body is a `StreamBody`: it writes text to whatever `TextSink` it is started on. Under
 * @hono/node-server that is the Node ServerResponse itself (http/sse.ts): strings go to the
 * socket with no web ReadableStream, no TextEncoder and no promise per chunk in between;
 * elsewhere (app.request in tests) `webStream` adapts it to a ReadableStream.
 *
 * How stream bytes move, end to end (from the upstream read to the client's socket):
 * A streamed body is a `StreamBody` (`wire/sse-writer.ts`): it writes text to a `TextSink` and is
 * told when the client went away. Under @hono/node-server, `http/sse.ts` starts it on the Node
 * `ServerResponse` itself (Hono still routes and runs the request shell; the route returns node-
 * server's `RESPONSE_ALREADY_SENT`): strings go to the socket with no web `ReadableStream`,
 * encoder or promise per chunk in between, and a full client buffer pauses the producer until
 * `drain`: the Responses pump asks its sink after each upstream read (`EventSink.backlog`, through
 * `FrameConsumer.afterRead`) and pauses the `UpstreamBody` while the client drains, so a slow
 * reader slows its upstream as a direct connection would (the tool loop's `RoundSink` forwards it,
 * a WebSocket's sink reads its socket's buffer; the event log has none, and a background
 * response's follower reads its log no faster than its client takes the events). Tests that call
 * `app.request` get the same body as a pulled `ReadableStream` (`webStream`). Every producer
 * writes once per upstream read (the SSE reader's `more` flag says another frame of the same read
 * follows): Responses events through `EventSink.flush`, chat pass-through frames joined in
 * `proxy/chat-stream.ts`, which parses a chunk only when it may carry usage (or when the answer
 * may be cached), passes a read of whole frames with nothing but the model name to change as its
 * text (`SseParser.wholeFrames`), and ends the client's response at `data: [DONE]`. A stream
 * silent for `server.sse_keepalive` gets a comment line (`http/sse-keepalive.ts`). A translated
 * stream reads an upstream text chunk shaped like the one before it without JSON.parse
 * (`translate/frame-shape.ts`: the chat kind's chunks, `translate/anthropic/delta-shape.ts`: the
 * Messages stream's text and thinking deltas), and writes its text deltas and its shared
 * created/in_progress snapshot without walking them (`wire/event-json.ts`: the same bytes as
 * `JSON.stringify`). A native stream passes its deltas as the upstream's text and parses its
 * lifecycle events to put the router's fields in (of one laid out as OpenAI writes it, only the
 * response: the event's type and number around it stay text); a read of whole frames laid out as
 * the router writes them is taken apart as bytes (`SseParser.wholeBytes`, `frameBounds`,
 * `translate/openai/passable.ts`): runs of events the router changes nothing in (deltas, as tokens
 * arrive; the parts' done events) go to the client as the upstream's bytes, never decoded
 * (`EventSink.sendRaw`: the HTTP body's sink has it; the event log, the tool loop's rounds and a
 * WebSocket take such reads frame by frame), the other frames are decoded one by one; an
 * `in_progress` that repeats `created`'s snapshot goes out as `created`'s client text under its
 * own type and number (`translate/openai/stream.ts`). The events before a terminal one are flushed
 * from a microtask, so they leave with the terminal event when storing took no I/O. Node corks a
 * response's writes until the end of the tick, so a small stream whose upstream answered in one
 * read leaves in one socket write: headers, events and the chunked end (headers with no event to
 * go with after 50 ms go on their own, so a slow first token does not keep the client waiting for
 * them). Once an event-loop turn has written something to a client, what it writes after that (a
 * JSON answer's end, a stream's events and end: `http/turn-writes.ts`, called by `http/json.ts`
 * and `http/sse.ts`) waits in its response or corked socket until the turn's check phase, and
 * leaves there with the rest: under load one turn finishes many answers, and written back to back
 * they wake a client on the same machine once rather than once each. The turn's first write goes
 * at once, so one request at a time waits for nothing but a stream's end (10-25 µs, its own store
 * and accounting). A WebSocket's sink corks its socket per upstream read and uncorks at the flush.
 */
import type { StreamEvent } from "./types.js";

/** Where stream events go: the client's SSE body, a background event log, or nowhere. */
export interface EventSink {
  send(type: string, data: string): void;
  /**
   * An event the router built, as the object, with what would serialise it for `send`: a sink that
   * changes events before writing them (a tool loop's round) takes them so rather than parsing the
   * text again, and serialises only what it writes. It must not change the event (the translator
   * may keep its parts). Without it, events go through `send` as text (`sendEvents`).
   */
  event?(ev: StreamEvent, serialise: (ev: StreamEvent) => string): void;
  /** Called after each upstream chunk: a chance to write batched events at once. */
  flush?(): void;
  /**
   * Whole event frames as the client gets them (`event: <type>\ndata: <json>\n\n` each, the
   * same bytes `send` would write), the last one numbered `sequence`: an upstream read passed
   * on as it came. Only a sink that writes SSE text has it; without it, frames go one by one.
   */
  sendRaw?(frames: Uint8Array, sequence: number): void;
  /**
   * Null while the client takes more; else resolves once it has drained what it was sent (or is
   * gone). The pump asks after each upstream read and pauses that read while it waits: a client
   * that reads slowly slows its upstream, as a direct connection would, instead of the router
   * reading the answer at full speed into its buffers. Only a sink on a connection (SSE, WebSocket) has it.
   */
  backlog?(): Promise<void> | null;
}

/** Where a body's text goes: the client's connection. */
export interface TextSink {
  /** Writes text (or bytes of it); false when the client's buffer is full (`ready()` before writing more). */
  write(text: string | Uint8Array): boolean;
  /** Resolves when the client can take more (or is gone). */
  ready(): Promise<void>;
  /** The body is complete. */
  end(): void;
}

/** A streamed body. `start` begins writing and returns what to call when the client goes away. */
export interface StreamBody {
  start(sink: TextSink): () => void;
}

const encoder = new TextEncoder();

/**
 * A text/event-stream body driven by `run`. Events are batched per upstream
 * chunk (one write per flush). When the client goes away `onCancel` aborts the
 * upstream call.
 */
export function sseBody(run: (sink: EventSink) => Promise<void>, onCancel: () => void): StreamBody {
  return {
    start(out) {
      let closed = false;
      let pending = "";
      // Bytes passed on as they came (sendRaw), held until the flush: one read's alone (the
      // common case: a read of deltas), or with the text batched around them, in order.
      let single: Uint8Array | null = null;
      let parts: (string | Uint8Array)[] | null = null;
      // The last flush found the client's buffer full (a write returned false).
      let full = false;
      const sink: EventSink = {
        send(type, data) {
          // A data field a native upstream sent over several lines (SSE joins them with "\n")
          // goes out over several `data:` lines again: a raw "\n" would cut the client's JSON.
          if (data.includes("\n")) data = data.replaceAll("\n", "\ndata: ");
          pending += `event: ${type}\ndata: ${data}\n\n`;
        },
        flush() {
          if (closed) return;
          // Writes of one tick leave in one socket write (a Node response corks its socket until the next tick).
          let room = true;
          if (single !== null) room = out.write(single);
          else if (parts !== null) for (const part of parts) room = out.write(part) && room;
          single = null;
          parts = null;
          if (pending.length > 0) {
            room = out.write(pending) && room;
            pending = "";
          }
          if (!room) full = true;
        },
        backlog() {
          if (!full || closed) return null;
          return out.ready().then(() => {
            full = false;
          });
        },
        sendRaw(frames) {
          // Held until the flush like any event: the pump flushes what precedes a terminal event
          // from a microtask, so that it leaves with it (execute.ts).
          if (single === null && parts === null && pending.length === 0) {
            single = frames;
            return;
          }
          parts ??= single !== null ? [single] : [];
          single = null;
          if (pending.length > 0) parts.push(pending);
          parts.push(frames);
          pending = "";
        },
      };
      run(sink)
        .catch(() => {
          // run() reports its own failures as events; anything left here is a client abort.
        })
        .finally(() => {
          sink.flush!();
          if (!closed) {
            closed = true;
            out.end();
          }
        });
      return () => {
        closed = true;
        onCancel();
      };
    },
  };
}

/** A body that is all there at once (a cache replay). */
export function textBody(text: string): StreamBody {
  return {
    start(out) {
      out.write(text);
      out.end();
      return () => {};
    },
  };
}

/**
 * A body as a web ReadableStream (pulled: with a high-water mark of 0, a writer told
 * "full" waits until the reader asks for more). Cancelling the stream is the client going away.
 */
export function webStream(body: StreamBody): ReadableStream<Uint8Array> {
  let cancel = () => {};
  let wake: (() => void) | null = null;
  let done = false;
  const resume = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        cancel = body.start({
          write(text) {
            if (done) return true;
            controller.enqueue(typeof text === "string" ? encoder.encode(text) : text);
            return (controller.desiredSize ?? 0) > 0;
          },
          ready: () => (done ? Promise.resolve() : new Promise<void>((resolve) => (wake = resolve))),
          end() {
            if (done) return;
            done = true;
            controller.close();
            resume();
          },
        });
      },
      pull: resume,
      cancel() {
        done = true;
        resume();
        cancel();
      },
    },
    { highWaterMark: 0 },
  );
}
