/**
 * The last requests this instance answered, for the console's requests page: a ring of
 * preallocated slots written in place, so recording a request allocates nothing but what it
 * already holds (its strings), and a slot's old strings are let go when it is written again.
 * Per instance (each instance lists its own); the response itself is read from the store.
 */
export interface RecentRequest {
  /** Unix ms when the answer was out. */
  at: number;
  requestId: string;
  method: string;
  route: string;
  model: string;
  key: string;
  status: number;
  ms: number;
  inputTokens: number;
  outputTokens: number;
  /** The response a POST /v1/responses made (stored or not), "" otherwise. */
  responseId: string;
  background: boolean;
  /** The request's trace id when it was traced, "" otherwise. */
  traceId: string;
}

export const RECENT_REQUESTS = 200;

export class RecentRequests {
  private readonly slots: RecentRequest[];
  private next = 0;
  private count = 0;

  constructor(readonly capacity = RECENT_REQUESTS) {
    this.slots = Array.from({ length: capacity }, () => ({ at: 0, requestId: "", method: "", route: "", model: "", key: "", status: 0, ms: 0, inputTokens: 0, outputTokens: 0, responseId: "", background: false, traceId: "" }));
  }

  /** The slot to fill for the next request (overwrites the oldest); fill every field. */
  private claim(): RecentRequest {
    const slot = this.slots[this.next]!;
    this.next = (this.next + 1) % this.capacity;
    if (this.count < this.capacity) this.count++;
    return slot;
  }

  /**
   * Records one request in the oldest slot, in place (positional, so recording allocates no
   * object of its own on the request path).
   */
  record(requestId: string, method: string, route: string, model: string, key: string, status: number, ms: number, inputTokens: number, outputTokens: number, responseId: string, background: boolean, traceId: string): void {
    const r = this.claim();
    r.at = Date.now();
    r.requestId = requestId;
    r.method = method;
    r.route = route;
    r.model = model;
    r.key = key;
    r.status = status;
    r.ms = ms;
    r.inputTokens = inputTokens;
    r.outputTokens = outputTokens;
    r.responseId = responseId;
    r.background = background;
    r.traceId = traceId;
  }

  /** Copies of the recorded requests, newest first. */
  list(): RecentRequest[] {
    const out: RecentRequest[] = [];
    for (let i = 1; i <= this.count; i++) out.push({ ...this.slots[(this.next - i + this.capacity) % this.capacity]! });
    return out;
  }
}
