import type { EventSink } from "../responses/execute.js";

const encoder = new TextEncoder();

/**
 * A text/event-stream body driven by `run`. Events are batched per upstream
 * chunk (one encode + one enqueue per flush). When the client goes away the
 * stream is cancelled and `onCancel` aborts the upstream call.
 */
export function sseBody(run: (sink: EventSink) => Promise<void>, onCancel: () => void): ReadableStream<Uint8Array> {
  let closed = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let pending = "";
      const sink: EventSink = {
        send(type, data) {
          pending += `event: ${type}\ndata: ${data}\n\n`;
        },
        flush() {
          if (pending.length === 0 || closed) return;
          controller.enqueue(encoder.encode(pending));
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
            controller.close();
          }
        });
    },
    cancel() {
      closed = true;
      onCancel();
    },
  });
}

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};
