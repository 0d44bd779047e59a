/**
 * SSE writing: the sink stream events are sent through, and the text/event-stream body
 * it fills. Below the HTTP layer so services can build bodies without importing http/.
 */

/** Where stream events go: the client's SSE body, a background event log, or nowhere. */
export interface EventSink {
  send(type: string, data: string): void;
  /** Called after each upstream chunk: a chance to write batched events at once. */
  flush?(): void;
}

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
          // A data field a native upstream sent over several lines (SSE joins them with "\n")
          // goes out over several `data:` lines again: a raw "\n" would cut the client's JSON.
          if (data.includes("\n")) data = data.replaceAll("\n", "\ndata: ");
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
