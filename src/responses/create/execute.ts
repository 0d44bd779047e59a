/**
 * What src/responses/create/ holds:
 * the create path: `validate` -> `plan` (model, history, ids; `item_reference` items resolved by
 * `references.ts` against history, the socket's recent responses, stored responses and
 * conversations) -> `cache-key` -> `execute` (one upstream attempt, then one pump loop over the
 * endpoint kind's adapter); store access as 503s, the stream's shutdown guard, the request span's
 * GenAI attributes
 */
/**
 * The path of POST /v1/responses from here down (steps 6-8 of docs/architecture.md, in detail):
 * (6) `responses/create/execute.ts` `connect` opens an `UpstreamAttempt` (`upstream/attempt.ts`):
 * `upstream/failover.ts` takes a slot from `routing/pool.ts`, calls the endpoint through
 * `upstream/client.ts` and fails over before the first byte, then down the model's fallbacks
 * (`upstream/fallback.ts`); the request body is built by the kind's core in `translate/`
 * (`translate/chat/`, `translate/openai/` or `translate/anthropic/`). The endpoint's kind is
 * looked at once, when the request is built for it: `connect` makes that kind's adapter
 * (`responses/adapters/chat.ts`, `openai.ts` or `anthropic.ts`), which keeps what reading the
 * answer needs (the tool-name map, the answer tool of a structured output) and travels with the
 * attempt; an anthropic request also carries its model's `anthropic-beta` header
 * (`PreparedRequest.headers`). (7) `pump` reads the answer through that adapter: the upstream's
 * SSE frames are pushed (`pipeSseFrames`, all the frames of a socket read together once it is over
 * - `UpstreamBody` joins the HTTP chunks undici hands over one by one - and the read's whole
 * frames offered as bytes, one promise per stream) to its stream translation (chat chunks through
 * `translate/chat/stream.ts`, native events through `translate/openai/stream.ts`, Messages events
 * through `translate/anthropic/stream.ts`) into an `EventSink` (`wire/sse-writer.ts`: the client's
 * SSE body; `responses/background/events.ts`: the event log). JSON answers are mapped whole. When
 * the request has tools the router runs (MCP, web search with a provider), the service calls
 * `responses/tool-loop/` `openRun` instead of `connect` (background jobs too): it lists the MCP
 * servers' tools (`tools/mcp/`), runs approved calls, then connects round after round, each round
 * a `connect` with the hosted tools as function tools, pumped into a `RoundSink` that keeps the
 * client's stream ONE response (a translated round hands it its events as objects,
 * `EventSink.event`: the round's own lifecycle and terminal events are dropped without being
 * serialised, the rest serialised once, renumbered); between rounds it runs the calls the model
 * made (`tools/mcp/` sessions, `tools/search/` providers), concurrently, and appends them with
 * their results. Its `pump` returns one `RunOutcome` like a single round's, so steps 8 and the
 * store, conversation, cancel and shutdown paths are the same. (8) The response is stored (and
 * appended to its conversation) BEFORE the terminal event goes out, so a client that sees the end
 * can chain from it; `http/sse.ts` writes the stream to the socket (see "How stream bytes move"
 * below). The attempt judges the endpoint on what follows the headers (a body that is not JSON, a
 * stream that breaks; `upstream/mid-stream.ts` names the cause) and `end` frees the slot and
 * counts the duration exactly once, when the body is done. The finished response is serialised
 * once (after its conversation append, the last change to it): the store's record, the cache entry
 * and a JSON answer are built from that one string.
 */
import { NO_KEY } from "../../keys/policy.js";
import { NO_TOKENS, type TokenCount } from "../../keys/usage.js";
import { fallbackSteps, type ModelStep } from "../../runtime/models.js";
import type { Endpoint, Lease } from "../../routing/pool.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { EventSink } from "../../wire/sse-writer.js";
import { unixSeconds } from "../../wire/clock.js";
import type { ResponseObject, StreamEvent } from "../../wire/types.js";
import { UpstreamAttempt } from "../../upstream/attempt.js";
import { midStreamError } from "../../upstream/mid-stream.js";
import { pipeSseFrames } from "../../upstream/sse.js";
import { END, sendEvents, type AdaptedRequest, type HeldTerminal, type ReadContext, type StreamTranslation } from "../adapters/adapter.js";
import { ChatRequest } from "../adapters/chat.js";
import { NativeRequest } from "../adapters/openai.js";
import { AnthropicRequest } from "../adapters/anthropic.js";
import { CompactTriggerRequest, endsWithCompactionTrigger } from "../compaction/trigger-adapter.js";
import { countCompaction } from "../compaction/compact.js";
import type { Plan } from "./plan.js";
import { fetchFileUrls } from "../files/fetch-files.js";
import { readStoredFiles } from "../files/stored-files.js";
import { traceOutcome } from "./trace.js";

export interface RunOutcome {
  /** The full response, as stored. */
  response: ResponseObject;
  /** Hide encrypted reasoning the router asked for on the client's behalf. */
  hideEncryptedReasoning: boolean;
  /** Search parts the client did not include (translate/openai/rewrite.ts HIDE_WEB_SOURCES, HIDE_FILE_RESULTS; the tool loop keeps them in the stored response). */
  hideSearchSources?: boolean | number;
  /** The terminal event, held back so the caller can store the response before the client sees it. */
  terminal: { type: string; data: string } | null;
  endpoint: string;
  /** The model that served it: the one asked for, or a fallback. */
  model: string;
  upstreamMs: number;
  /** The tool loop's rounds, each with the usage its serving model and endpoint reported (their sum is `response.usage`). */
  rounds?: RoundUsage[];
}

export interface PumpOptions {
  /**
   * When the signal aborts mid-stream, resolve with what was produced so far (open items
   * closed as incomplete, `response.status: "cancelled"`, `terminal: null`) instead of
   * rejecting. Background jobs use it to keep partial output on cancel and shutdown.
   */
  keepPartialOnAbort?: boolean;
  /**
   * The terminal event is not sent on (a tool loop's round: the loop sends one for the whole
   * response): one the router builds is serialised only if its text is read.
   */
  terminalUnsent?: boolean;
}

/** An upstream that answered 2xx; `pump` reads its body to the end and frees the slot. */
export interface Connection {
  endpoint: Pick<Endpoint, "name">;
  /** The model that serves it: the one asked for, or a fallback. */
  model: string;
  pump(sink: EventSink | null, opts?: PumpOptions): Promise<RunOutcome>;
}

/** The adapter per endpoint kind: the one place the kind is looked at on this path. */
const ADAPTERS: Record<Endpoint["config"]["kind"], new (plan: Plan, lease: Lease, stream: boolean) => AdaptedRequest> = {
  chat: ChatRequest,
  openai: NativeRequest,
  anthropic: AnthropicRequest,
};

/**
 * Picks an endpoint (with failover) and sends the request in the form its kind
 * speaks. When the whole pool fails before the first byte, the model's fallbacks
 * are tried in order (any kind: the history is the router's, replayed to either).
 * Resolves once an upstream answered 2xx headers: errors before that reach the
 * caller as exceptions (an HTTP error for the client), errors after it become a
 * `response.failed` inside the stream. The client's model name stays on the response.
 */
export async function connect(rt: Runtime, plan: Plan, signal: AbortSignal, stream: boolean, initialStatus: "in_progress" | "queued" = "in_progress", laterRound = false): Promise<Connection> {
  // file_url contents for a chat or anthropic backend, before any translation; awaited only when there is something to wait for.
  const fetched = fetchFileUrls(plan, signal);
  plan = fetched instanceof Promise ? await fetched : fetched;
  const read = readStoredFiles(rt, plan); // file_id contents, read once (the service, a tool loop or a background job's plan may have them)
  plan = read instanceof Promise ? await read : read;
  const attempt = await UpstreamAttempt.open(rt, {
    model: plan.model,
    steps: fallbackSteps(plan.cfg, plan.model, plan.modelCfg, plan.targets),
    routing: plan.cfg.routing,
    signal,
    prefer: plan.preferEndpoint,
    // The plan as the serving model's config shapes it (hosted tools, encrypted reasoning); `model` stays the client's.
    prepare: (lease, step) => new (adapterFor(lease.endpoint.config.kind, plan))(servedPlan(plan, step), lease, stream),
  });
  const request = attempt.request;
  // Once per response: a later round of the tool loop drops the same tools again, and its first
  // token is not the response's (time to first token counts from the request, once).
  if (laterRound) attempt.firstTokenSeen();
  else for (const tool of request.droppedTools) rt.metrics.droppedTools.inc({ model: plan.model, tool_type: tool });
  const model = attempt.step.model;
  return {
    endpoint: attempt.endpoint,
    model,
    pump: async (sink, opts = {}) => {
      let ok = false;
      try {
        const rd: ReadContext = { rt, attempt, initialStatus, clock: unixSeconds };
        const result = sink ? await pumpStream(request.stream(rd), attempt, sink, signal, opts) : { response: request.fromJson((await attempt.readJson()).json, rd), terminal: null };
        ok = result.response.status !== "failed";
        // The chat kind's compaction adapter counts its own; a native one is the upstream's.
        if (endsWithCompactionTrigger(plan) && attempt.endpoint.config.kind === "openai" && result.response.status === "completed") {
          countCompaction(rt, { model: plan.model, kind: "openai", trigger: "trigger", before: result.response.usage?.input_tokens ?? 0 });
        }
        if (attempt.span?.isRecording()) traceOutcome(attempt.span, result.response, attempt.lease.target.upstreamModel, rt.tracing.captureContent);
        return { ...result, hideEncryptedReasoning: request.hidesEncryptedReasoning, endpoint: attempt.endpoint.name, model, upstreamMs: performance.now() - attempt.started };
      } finally {
        attempt.end(ok);
      }
    },
  };
}

/** A `compaction_trigger` as the last input item: the chat and anthropic kinds summarise instead of answering (compaction/trigger-adapter.ts). */
function adapterFor(kind: Endpoint["config"]["kind"], plan: Plan): (typeof ADAPTERS)[typeof kind] {
  return kind !== "openai" && endsWithCompactionTrigger(plan) ? CompactTriggerRequest : ADAPTERS[kind];
}

function servedPlan(plan: Plan, step: ModelStep): Plan {
  return step.model === plan.model ? plan : { ...plan, modelCfg: step.modelCfg, targets: step.targets };
}

/** One upstream round of a response: what served it and the usage it reported. */
export interface RoundUsage {
  model: string;
  endpoint: string;
  usage: ResponseObject["usage"];
}

const SPENT = Symbol("spentTokens");

/**
 * A request that failed after it had spent upstream tokens (a tool loop's earlier rounds): its
 * error carries them, so the key's limits and the request's stats still charge what was used.
 */
export function withSpentTokens(err: unknown, tokens: TokenCount): unknown {
  if (err !== null && typeof err === "object" && tokens !== NO_TOKENS) (err as { [SPENT]?: TokenCount })[SPENT] = tokens;
  return err;
}

/** The tokens a failed request had spent (withSpentTokens), if any. */
export function spentTokens(err: unknown): TokenCount | undefined {
  return err !== null && typeof err === "object" ? (err as { [SPENT]?: TokenCount })[SPENT] : undefined;
}

/**
 * Counts the tokens an upstream reported for a finished run, under the model that served it and
 * the key's name ("" without keys); a tool loop's rounds each under their own model and endpoint.
 */
export function recordTokenUsage(rt: Runtime, out: Pick<RunOutcome, "response" | "endpoint" | "model" | "rounds">, key: string | null): TokenCount {
  if (!out.rounds) return countTokens(rt, out.model, out.endpoint, out.response.usage, key);
  let input = 0;
  let output = 0;
  const byModel: NonNullable<TokenCount["byModel"]> = [];
  for (const r of out.rounds) {
    const t = countTokens(rt, r.model, r.endpoint, r.usage, key);
    input += t.input;
    output += t.output;
    const m = byModel.find((x) => x.model === r.model);
    if (m) {
      m.input += t.input;
      m.output += t.output;
    } else byModel.push({ model: r.model, input: t.input, output: t.output });
  }
  if (!out.response.usage) return NO_TOKENS;
  return byModel.length > 1 ? { input, output, byModel } : { input, output };
}

function countTokens(rt: Runtime, model: string, upstream: string, u: ResponseObject["usage"], key: string | null): TokenCount {
  if (!u) return NO_TOKENS;
  const k = key ?? NO_KEY;
  const m = rt.metrics.tokens;
  m.inc({ model, upstream, type: "input", key: k }, u.input_tokens ?? 0);
  m.inc({ model, upstream, type: "output", key: k }, u.output_tokens ?? 0);
  m.inc({ model, upstream, type: "cached", key: k }, u.input_tokens_details?.cached_tokens ?? 0);
  // Written to the prompt cache (Anthropic reports it; 0 elsewhere): the price of the hits to come.
  const written = (u.input_tokens_details as { cache_write_tokens?: number } | undefined)?.cache_write_tokens ?? 0;
  if (written > 0) m.inc({ model, upstream, type: "cache_write", key: k }, written);
  m.inc({ model, upstream, type: "reasoning", key: k }, u.output_tokens_details?.reasoning_tokens ?? 0);
  return { input: u.input_tokens ?? 0, output: u.output_tokens ?? 0 };
}

type Pumped = Pick<RunOutcome, "response" | "terminal">;

/**
 * Reads an upstream stream through its kind's translation into the sink. The terminal event is
 * returned, not sent; an upstream that breaks ends in `response.failed` (and counts against its
 * endpoint); a caller that goes away rejects, or with `keepPartialOnAbort` keeps what came.
 *
 * The frames are pushed (`pipeSseFrames`): every frame of an upstream socket read is translated
 * together once the read is over (UpstreamBody), one promise per stream rather than an
 * iterator step (and its promises and microtask hops) per frame.
 */
function pumpStream(tr: StreamTranslation, attempt: UpstreamAttempt<ModelStep, AdaptedRequest>, sink: EventSink, signal: AbortSignal, opts: PumpOptions): Promise<Pumped> {
  return new Promise<Pumped>((resolve, reject) => {
    let settled = false;
    const ended = (held: HeldTerminal) => {
      settled = true;
      // What came before the terminal event is written from a microtask, not in the upstream
      // read's turn: the socket write then leaves at the next tick (or at the turn's end when
      // it is not the turn's first write: http/turn-writes.ts), together with the terminal event
      // and the end when storing the response took no I/O (one write per stream), and at once,
      // not after the store, when it did.
      queueMicrotask(() => sink.flush?.());
      resolve({ response: tr.response, terminal: held });
    };
    const closeWith = (tail: StreamEvent[]) => {
      const terminal = tail.pop()!;
      sendEvents(sink, tail, (ev) => tr.serialise(ev), false);
      ended(opts.terminalUnsent ? new LazyTerminal(terminal, tr) : { type: terminal.type, data: tr.serialise(terminal) });
    };
    const broke = (err: unknown) => {
      if (settled) return;
      if (signal.aborted) {
        settled = true;
        if (!opts.keepPartialOnAbort) return reject(err);
        sendEvents(sink, tr.cancel(), (ev) => tr.serialise(ev));
        return resolve({ response: tr.response, terminal: null });
      }
      // An in-band error chunk is the server's own answer (maybe about this request): not an endpoint fault.
      attempt.streamBroke(err);
      closeWith(tr.fail(midStreamError(err, "responses")));
    };
    tr.start(sink); // a throw here rejects, as before the upstream body is read
    const body = attempt.reply.body;
    pipeSseFrames(body, {
      onWholeBytes: tr.pushRaw
        ? (chunk) => {
            if (settled) return "stop";
            try {
              const held = tr.pushRaw!(chunk, sink);
              if (held === false) return "parse";
              if (held === null) return "taken";
              if (held === END) closeWith(tr.finish());
              else ended(held);
            } catch (err) {
              broke(err);
            }
            return "stop";
          }
        : undefined,
      onFrame(frame) {
        if (settled) return true;
        try {
          const held = tr.push(frame, sink);
          if (held === null) return false;
          if (held === END) closeWith(tr.finish());
          else ended(held);
        } catch (err) {
          broke(err);
        }
        return true;
      },
      onEnd() {
        if (settled) return;
        try {
          closeWith(tr.finish());
        } catch (err) {
          broke(err);
        }
      },
      onError: broke,
      // A client whose buffer is full: the upstream read waits until it drains.
      afterRead: sink.backlog
        ? () => {
            const drained = sink.backlog!();
            if (drained === null) return;
            body.pause();
            void drained.then(() => body.resume());
          }
        : undefined,
    });
  });
}

/**
 * A terminal event serialised when its text is first read. A class, not an object literal with
 * a getter: each such literal gets a hidden class of its own, made in the old generation, whose
 * getter closure holds the event and the translation (the whole round). Until the next full GC
 * every young-generation collection then found each round since the last one alive, copied and
 * promoted it (a streamed MCP round: 15-20% of what it allocated survived, 6% with the class).
 */
class LazyTerminal implements HeldTerminal {
  readonly type: string;
  private text: string | undefined;

  constructor(
    private readonly ev: StreamEvent,
    private readonly tr: StreamTranslation,
  ) {
    this.type = ev.type;
  }

  get data(): string {
    return (this.text ??= this.tr.serialise(this.ev));
  }
}
