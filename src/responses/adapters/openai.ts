/** `kind: openai` endpoints: the Responses request passed through (translate/openai/), the answer's ids and router fields rewritten. */
import { applyRouterFields, nativeRequestBody, type RouterFields } from "../../translate/openai/rewrite.js";
import { NativeStreamMachine } from "../../translate/openai/stream.js";
import { storedFilesInline } from "../../translate/openai/files.js";
import { deltaEvent, passableEvent } from "../../translate/openai/passable.js";
import { frameBounds } from "../../wire/sse-parser.js";
import { ENCRYPTED_REASONING } from "../../wire/protocol.js";
import type { Lease } from "../../routing/pool.js";
import type { EventSink } from "../../wire/sse-writer.js";
import type { ResponseObject, StreamEvent } from "../../wire/types.js";
import { scrubSecret } from "../../ops/secrets.js";
import type { SseFrame } from "../../upstream/sse.js";
import { CountedStream, END, planSkeleton, type AdaptedRequest, type HeldTerminal, type ReadContext, type StreamTranslation } from "./adapter.js";
import type { Plan } from "../create/plan.js";
import { routerCompactionsAsText } from "../compaction/compact.js";

const REASONING_MODEL = /^(o\d|gpt-5|codex|computer-use)/i;

export class NativeRequest implements AdaptedRequest {
  readonly path = "/responses";
  body: string;
  readonly droppedTools: readonly string[] = [];
  readonly hidesEncryptedReasoning: boolean;
  readonly headers?: Readonly<Record<string, string>>;

  constructor(
    private readonly plan: Plan,
    private readonly lease: Lease,
    stream: boolean,
  ) {
    const body = nativeRequestBody(plan.req, { upstreamModel: lease.target.upstreamModel, history: plan.history, stream, wantEncryptedReasoning: wantsEncryptedReasoning(plan), resolved: plan.input });
    body.input = storedFilesInline(routerCompactionsAsText(body.input, plan.cfg), plan.storedFiles) as typeof body.input;
    this.body = JSON.stringify(body);
    this.hidesEncryptedReasoning = shouldHideEncryptedReasoning(plan);
    this.headers = clientHeadersFor(plan.upstreamHeaders, lease.endpoint.config.headers);
  }

  fromJson(json: unknown, rd: ReadContext): ResponseObject {
    return applyRouterFields(json as Record<string, unknown>, this.fields(rd));
  }

  stream(rd: ReadContext): StreamTranslation {
    const secret = this.lease.endpoint.config.api_key;
    return new NativeStream(new NativeStreamMachine(this.fields(rd), { scrub: (text) => scrubSecret(text, secret) }), rd);
  }

  /** What the router sets on the upstream's objects: its ids, its store/background, the client's model name. */
  private fields(rd: ReadContext): RouterFields & { defaults: ResponseObject } {
    const plan = this.plan;
    return {
      id: plan.id,
      previousResponseId: plan.previousResponseId,
      conversation: plan.conversationId ? { id: plan.conversationId } : undefined,
      store: plan.store,
      background: plan.background,
      model: this.lease.target.upstreamModel === plan.model ? undefined : plan.model,
      hideEncryptedReasoning: this.hidesEncryptedReasoning,
      defaults: planSkeleton(plan, "in_progress"),
      clock: rd.clock,
    };
  }
}

class NativeStream extends CountedStream<NativeStreamMachine> {
  /** Where the frames of the read `pushRaw` is reading are (reused from read to read). */
  private readonly bounds: number[] = [];

  constructor(m: NativeStreamMachine, rd: ReadContext) {
    super(m, rd, "native");
  }

  start(): void {}

  push(frame: SseFrame, sink: EventSink): HeldTerminal | typeof END | null {
    if (frame.data === "[DONE]") {
      this.chunks.flush();
      return END;
    }
    const out = this.tr.push(frame.event, frame.data);
    if (out.type.endsWith(".delta")) this.rd.attempt.firstToken();
    this.chunks.add(frame.more);
    if (out.terminal) {
      this.chunks.flush(); // what came before it is flushed by the pump (execute.ts), not held for the store
      return { type: out.type, data: out.data };
    }
    sink.send(out.type, out.data);
    if (!frame.more) sink.flush?.();
    return null;
  }

  /**
   * A whole upstream read laid out as the router writes frames: runs of the events the router
   * changes nothing in (deltas, as tokens arrive) go out as their bytes, never decoded; the other
   * frames (lifecycle, output_item, a run that names the upstream's id) are decoded and pushed
   * one by one. As `push`, the upstream's terminal event is returned (what follows it is not read).
   */
  pushRaw(chunk: Buffer, sink: EventSink): HeldTerminal | typeof END | null | false {
    const bounds = this.bounds;
    if (!sink.sendRaw || !frameBounds(chunk, bounds)) return false;
    let run = -1; // the frame (index into bounds) that starts a run of passable frames
    for (let i = 0; i < bounds.length; i += 3) {
      if (passableEvent(chunk, bounds[i]!, bounds[i + 1]!)) {
        if (run < 0) run = i;
        continue;
      }
      if (run >= 0) {
        const out = this.passRun(chunk, bounds, run, i, sink);
        if (out !== null) return out;
        run = -1;
      }
      const out = this.pushAt(chunk, bounds, i, sink);
      if (out !== null) return out;
    }
    const out = run >= 0 ? this.passRun(chunk, bounds, run, bounds.length, sink) : null;
    if (out !== null) return out;
    this.chunks.flush();
    sink.flush?.();
    return null;
  }

  /** The frames `bounds[from, to)` as one run of bytes, or one by one when the machine will not pass them. */
  private passRun(chunk: Buffer, bounds: number[], from: number, to: number, sink: EventSink): HeldTerminal | typeof END | null {
    if (this.tr.passRun(chunk, bounds[from]!, bounds[to - 1]!)) {
      let delta = false;
      for (let i = from; i < to && !delta; i += 3) delta = deltaEvent(chunk, bounds[i + 1]!);
      if (delta) this.rd.attempt.firstToken();
      this.chunks.addMany((to - from) / 3);
      const start = bounds[from]!;
      const end = bounds[to - 1]!;
      sink.sendRaw!(start === 0 && end === chunk.length ? chunk : chunk.subarray(start, end), this.tr.sequence - 1);
      return null;
    }
    for (let i = from; i < to; i += 3) {
      const out = this.pushAt(chunk, bounds, i, sink);
      if (out !== null) return out;
    }
    return null;
  }

  /** The frame at `bounds[i]`, decoded and pushed; `more` unless it is the read's last. */
  private pushAt(chunk: Buffer, bounds: number[], i: number, sink: EventSink): HeldTerminal | typeof END | null {
    const start = bounds[i]!;
    const nl = bounds[i + 1]!;
    const end = bounds[i + 2]!;
    return this.push({ event: chunk.toString("utf8", start + 7, nl), data: chunk.toString("utf8", nl + 7, end - 2), more: end < chunk.length }, sink);
  }

  serialise(ev: StreamEvent): string {
    return this.tr.serialise(ev);
  }
}

/** Hide encrypted reasoning the router asked for but the client did not include. */
export function shouldHideEncryptedReasoning(plan: Plan): boolean {
  return wantsEncryptedReasoning(plan) && !(plan.req.include ?? []).includes(ENCRYPTED_REASONING);
}

function wantsEncryptedReasoning(plan: Plan): boolean {
  if (plan.modelCfg.encrypted_reasoning !== undefined) return plan.modelCfg.encrypted_reasoning;
  return (plan.req.reasoning != null && typeof plan.req.reasoning === "object") || REASONING_MODEL.test(plan.req.model);
}

/** The client's forwarded headers, less those the endpoint sets itself (its configured value wins). */
export function clientHeadersFor(client: Readonly<Record<string, string>> | undefined, own: Record<string, string>): Readonly<Record<string, string>> | undefined {
  if (!client) return undefined;
  const names = Object.keys(own);
  if (names.length === 0) return client;
  const taken = new Set(names.map((n) => n.toLowerCase()));
  const out = Object.fromEntries(Object.entries(client).filter(([name]) => !taken.has(name)));
  return Object.keys(out).length > 0 ? out : undefined;
}
