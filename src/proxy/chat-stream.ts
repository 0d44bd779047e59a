import { scrubSecret } from "../upstream/errors.js";
import { midStreamError } from "../upstream/mid-stream.js";
import type { SseFrame } from "../upstream/sse.js";
import type { ChatChunkAccumulator } from "./chat-cache.js";

const encoder = new TextEncoder();
const USAGE = /"usage"\s*:\s*\{/;

export interface ProxyStreamHooks {
  /** Maps the upstream model name back to the client's, per chunk (null: leave it). */
  rename: ((json: string) => string) | null;
  /** The endpoint's own key: an upstream that echoes it (say, in an in-band error chunk) must not pass it on. */
  secret?: string;
  /** Folds every chunk into a completion (only when the answer may be cached). */
  accumulator: ChatChunkAccumulator | null;
  onFirstFrame(): void;
  onUsage(usage: unknown): void;
  /**
   * Called exactly once: `ok` when the upstream stream ended by itself, else with
   * the reason (upstream death, or the client going away: `cancelled`).
   */
  onEnd(outcome: { ok: true; everyChunkRead: boolean } | { ok: false; cancelled: boolean; error: unknown }): void;
  /** Aborts the upstream call (the client went away). */
  abort(): void;
  /** Aborts at the shutdown deadline: the stream then ends with an error chunk saying so. */
  deadline?: AbortSignal;
}

/**
 * The client's body for a streamed chat completion: the backend's SSE frames one
 * by one as they arrive, each `data` payload untouched but for the model name.
 * Reading is pulled by the client, so a slow client slows the upstream read
 * instead of buffering it. If the upstream dies mid-stream the client gets one
 * OpenAI-style error chunk (`data: {"error":{...}}`) and the stream closes;
 * if the client goes away the upstream call is aborted.
 */
export function proxiedSseBody(frames: AsyncIterable<SseFrame>, hooks: ProxyStreamHooks): ReadableStream<Uint8Array> {
  const it = frames[Symbol.asyncIterator]();
  let ended = false;
  let first = true;
  let usable = hooks.accumulator !== null;
  const end = (outcome: Parameters<ProxyStreamHooks["onEnd"]>[0]) => {
    if (ended) return;
    ended = true;
    hooks.deadline?.removeEventListener("abort", onDeadline);
    hooks.onEnd(outcome);
  };
  let onDeadline = () => {};
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // At the shutdown deadline: one error chunk (the openai SDK raises it), then the end.
        onDeadline = () => {
          if (ended) return;
          controller.enqueue(encoder.encode(shutdownFrame(hooks.deadline!.reason)));
          controller.close();
          end({ ok: false, cancelled: true, error: hooks.deadline!.reason });
          hooks.abort();
          void it.return?.(undefined)?.catch(() => {});
        };
        if (hooks.deadline?.aborted) onDeadline();
        else hooks.deadline?.addEventListener("abort", onDeadline, { once: true });
      },
      async pull(controller) {
        let step: IteratorResult<SseFrame>;
        try {
          step = await it.next();
        } catch (error) {
          if (ended) return; // cancelled: the abort broke the read
          controller.enqueue(encoder.encode(errorFrame(error)));
          controller.close();
          end({ ok: false, cancelled: false, error });
          return;
        }
        if (ended) return;
        if (step.done) {
          controller.close();
          end({ ok: true, everyChunkRead: usable });
          return;
        }
        const frame = step.value;
        if (first) {
          first = false;
          hooks.onFirstFrame();
        }
        if (frame.data !== "[DONE]" && (usable || USAGE.test(frame.data))) {
          try {
            const chunk = JSON.parse(frame.data) as Record<string, unknown>;
            if (chunk.usage && typeof chunk.usage === "object") hooks.onUsage(chunk.usage);
            if (usable) hooks.accumulator!.push(chunk);
          } catch {
            usable = false; // not JSON: still forwarded, never cached
          }
        }
        let data = hooks.rename ? hooks.rename(frame.data) : frame.data;
        if (hooks.secret && data.includes(hooks.secret)) data = scrubSecret(data, hooks.secret);
        // A data field the upstream sent over several lines goes out over several `data:` lines too.
        if (data.includes("\n")) data = data.replaceAll("\n", "\ndata: ");
        controller.enqueue(encoder.encode(`${frame.event ? `event: ${frame.event}\n` : ""}data: ${data}\n\n`));
      },
      cancel(reason) {
        end({ ok: false, cancelled: true, error: reason });
        hooks.abort();
        void it.return?.(undefined)?.catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}

/** The chunk that ends a stream whose upstream died, in OpenAI's in-band error shape. */
export function errorFrame(error: unknown): string {
  const { code, message } = midStreamError(error, "chat");
  return `data: ${JSON.stringify({ error: { message, type: "server_error", param: null, code } })}\n\n`;
}

function shutdownFrame(reason: unknown): string {
  const message = reason instanceof Error ? reason.message : "The router is shutting down.";
  return `data: ${JSON.stringify({ error: { message, type: "server_error", param: null, code: "server_shutting_down" } })}\n\n`;
}

/** Chunks (a cache replay) as an SSE body ending in `data: [DONE]`. */
export function chunksSseBody(chunks: Record<string, unknown>[]): ReadableStream<Uint8Array> {
  const text = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(text));
      controller.close();
    },
  });
}
