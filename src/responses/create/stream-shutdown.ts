import { clientText } from "../../translate/openai/rewrite.js";
import { failedResponse } from "../../translate/index.js";
import { ShutdownDeadline, type Deadline } from "../../runtime/deadline.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { EventSink } from "../../wire/sse-writer.js";
import { emitted } from "../../wire/emitted.js";
import type { EmittedResponse } from "../../wire/types.js";
import type { PumpOptions, RunOutcome } from "./execute.js";

/**
 * Ends a streamed create properly at the shutdown deadline: the upstream call is aborted,
 * the pump keeps the partial output (open items closed as incomplete), and the stream ends
 * with `response.failed` (error code `server_shutting_down`) numbered after the last event
 * sent, instead of a bare close. A client that goes away is handled as before (the pump
 * rejects): partial output is kept only when the deadline stopped the stream.
 */
export class StreamShutdown {
  private lastData = "";
  /** The sequence number of the last frames sent as bytes (`sendRaw`), while nothing was sent after them. */
  private lastRaw: number | undefined;
  private hit = false;
  private readonly deadline: Deadline;
  private readonly slot: number;
  private readonly onDeadline = () => {
    this.hit = true;
    this.abortUpstream();
  };

  /** The sink to pump into: remembers the last event (its sequence number is read only at the deadline). */
  readonly sink: EventSink;
  /** Read by the pump when its signal aborts. */
  readonly options: PumpOptions;

  constructor(
    rt: Runtime,
    sink: EventSink,
    private readonly abortUpstream: () => void,
  ) {
    this.sink = {
      send: (type, data) => {
        this.lastData = data;
        this.lastRaw = undefined;
        sink.send(type, data);
      },
      flush: () => sink.flush?.(),
      sendRaw: sink.sendRaw
        ? (frames, sequence) => {
            this.lastRaw = sequence;
            sink.sendRaw!(frames, sequence);
          }
        : undefined,
      backlog: sink.backlog ? () => sink.backlog!() : undefined,
    };
    // The pump reads `keepPartialOnAbort` from this object's class getter. (An object literal
    // with a getter closure per stream gave every stream its own hidden class, in old space,
    // whose getter kept the whole request reachable until the next full GC: each
    // young-generation collection then copied and promoted every recent stream, 2-8 ms pauses.)
    this.options = this;
    this.deadline = rt.streamsDeadline;
    this.slot = this.deadline.listen(this.onDeadline);
  }

  /** The run's outcome; when the deadline stopped it, as a failed response with its terminal event. */
  outcome(out: RunOutcome): RunOutcome {
    if (!this.hit) return out;
    const reason = new ShutdownDeadline();
    const last = this.lastRaw ?? (this.lastData ? (JSON.parse(this.lastData) as { sequence_number?: number }).sequence_number : undefined);
    const response = failedResponse(out.response, { code: reason.code, message: reason.message });
    const event = emitted({ type: "response.failed", response: response as unknown as EmittedResponse, sequence_number: (last ?? -1) + 1 });
    return { ...out, response, terminal: { type: event.type, data: clientText(event, out.hideEncryptedReasoning, out.hideSearchSources) } };
  }

  /** PumpOptions: keep the partial output only when the deadline stopped the stream. */
  get keepPartialOnAbort(): boolean {
    return this.hit;
  }

  stop(): void {
    this.deadline.forget(this.slot);
  }
}
