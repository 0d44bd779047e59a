import { scrubSecret } from "../ops/secrets.js";
import { midStreamError } from "../upstream/mid-stream.js";
import type { UpstreamBody } from "../upstream/body.js";
import { pipeSseFrames, type SseFrame } from "../upstream/sse.js";
import type { Deadline } from "../runtime/deadline.js";
import type { ChatChunkAccumulator } from "./chat-cache.js";
import { textBody, type StreamBody } from "../wire/sse-writer.js";

const USAGE = /"usage"\s*:\s*\{/;
const USAGE_ALL = new RegExp(USAGE.source, "g");
const DONE_FRAME = "data: [DONE]\n\n";

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
  /** The shutdown deadline: when it passes the stream ends with an error chunk saying so. */
  deadline?: Deadline;
}

/**
 * The client's body for a streamed chat completion: the backend's SSE frames as they
 * arrive, each `data` payload untouched but for the model name, every frame of one
 * upstream read in one write. Only a chunk that may carry usage (or every chunk, when
 * the answer may be cached) is parsed; a read that is whole frames with nothing to change
 * but the model name is passed on as its text (its comment and `id:` lines too). A client
 * whose buffer is full pauses the upstream read until it drains. If the upstream dies
 * mid-stream the client gets one OpenAI-style error chunk (`data: {"error":{...}}`) and the
 * stream closes; if the client goes away the upstream call is aborted.
 */
export function proxiedSseBody(body: UpstreamBody, hooks: ProxyStreamHooks): StreamBody {
  return {
    start(out) {
      let ended = false;
      let first = true;
      let usable = hooks.accumulator !== null;
      let deadlineSlot = -1;
      const end = (outcome: Parameters<ProxyStreamHooks["onEnd"]>[0]) => {
        if (ended) return false;
        ended = true;
        hooks.deadline?.forget(deadlineSlot);
        hooks.onEnd(outcome);
        return true;
      };
      const stop = () => {
        hooks.abort();
        body.release();
      };
      // At the shutdown deadline: one error chunk (the openai SDK raises it), then the end.
      const onDeadline = () => {
        const reason = hooks.deadline!.reason;
        if (!end({ ok: false, cancelled: true, error: reason })) return;
        out.write(shutdownFrame(reason));
        out.end();
        stop();
      };
      /** One frame as the client gets it: usage read, model renamed, the key scrubbed. */
      const forward = (frame: SseFrame): string => {
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
        return frame.event ? `event: ${frame.event}\ndata: ${data}\n\n` : `data: ${data}\n\n`;
      };
      /**
       * The usage of a whole read's frames that may carry it (each parsed, as `forward` does; one
       * scan of the read when none does); false, reading nothing, when such a frame is not one
       * plain `data:` line (the read is parsed then).
       */
      const readUsage = (text: string): boolean => {
        const found: unknown[] = [];
        USAGE_ALL.lastIndex = 0;
        for (let m = USAGE_ALL.exec(text); m !== null; m = USAGE_ALL.exec(text)) {
          const before = text.lastIndexOf("\n\n", m.index);
          const start = before === -1 ? 0 : before + 2;
          const end = text.indexOf("\n\n", m.index); // a whole read ends with a blank line
          USAGE_ALL.lastIndex = end + 2;
          if (!text.startsWith("data: ", start) || text.indexOf("\n", start) !== end) return false;
          try {
            const chunk = JSON.parse(text.slice(start + 6, end)) as Record<string, unknown>;
            if (chunk.usage && typeof chunk.usage === "object") found.push(chunk.usage);
          } catch {
            // not JSON: forwarded as it came, as `forward` does
          }
        }
        for (const usage of found) hooks.onUsage(usage);
        return true;
      };
      /** Writes what the client gets of one upstream read; a client whose buffer is full pauses the upstream read until it drains. */
      const send = (text: string) => {
        if (out.write(text)) return;
        body.pause();
        void out.ready().then(() => {
          if (!ended) body.resume();
        });
      };
      // `more`: the next frame came in the same upstream read; they leave in one write.
      let batch = "";
      const pump = () =>
        pipeSseFrames(body, {
          // A read of whole frames the router changes nothing in but the model name (no key in
          // it, no cache to fill, [DONE] only as its last frame) goes out as it came, renamed in
          // one pass: only a frame that carries usage is parsed.
          onWholeRead(text) {
            if (ended || usable || (hooks.secret && text.includes(hooks.secret))) return "parse";
            // [DONE] only as the read's own last frame; anywhere else (a frame after it, the text of a chunk) the read is parsed.
            const last = endsWithDone(text);
            if (text.indexOf("[DONE]") !== (last ? text.length - DONE_FRAME.length + "data: ".length : -1)) return "parse";
            if (!readUsage(text)) return "parse";
            if (first) {
              first = false;
              hooks.onFirstFrame();
            }
            const renamed = hooks.rename ? hooks.rename(text) : text;
            if (!last) {
              send(renamed);
              return "taken";
            }
            // The protocol's end, as onFrame ends at [DONE].
            out.write(renamed);
            out.end();
            end({ ok: true, everyChunkRead: usable });
            return "stop";
          },
          onFrame(frame) {
            if (ended) return true;
            batch += forward(frame);
            if (frame.data === "[DONE]") {
              // The protocol's end: the client's response ends with it, not a read later with
              // the upstream's (which costs a socket write of its own). What the upstream may
              // still send is released (UpstreamBody.release: dropped when already there).
              out.write(batch);
              out.end();
              end({ ok: true, everyChunkRead: usable });
              return true;
            }
            if (frame.more) return false;
            const text = batch;
            batch = "";
            send(text);
            return false;
          },
          onEnd() {
            if (ended) return;
            if (batch.length > 0) out.write(batch);
            out.end();
            end({ ok: true, everyChunkRead: usable });
          },
          onError(error) {
            if (ended) return; // cancelled: the abort broke the read
            out.write(batch + errorFrame(error));
            out.end();
            end({ ok: false, cancelled: false, error });
          },
        });
      // A deadline already passed ends the stream here, before any read.
      if (hooks.deadline) deadlineSlot = hooks.deadline.listen(onDeadline);
      if (!ended) pump();
      return () => {
        if (end({ ok: false, cancelled: true, error: new DOMException("client disconnected", "AbortError") })) stop();
      };
    },
  };
}

/** The read ends with the `data: [DONE]` frame (its own frame: a blank line or nothing before it). */
function endsWithDone(text: string): boolean {
  const at = text.length - DONE_FRAME.length;
  return text.endsWith(DONE_FRAME) && (at === 0 || (text.charCodeAt(at - 1) === 10 && text.charCodeAt(at - 2) === 10));
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
export function chunksSseBody(chunks: Record<string, unknown>[]): StreamBody {
  return textBody(chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n");
}
