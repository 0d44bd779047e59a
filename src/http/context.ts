import type { Context } from "hono";
import { ApiError, invalidRequest } from "../ops/errors.js";
import type { KeyGate } from "../keys/limits.js";
import type { ApiKey } from "../keys/policy.js";
import type { TokenCount } from "../keys/usage.js";

/** What a request carries through the middleware chain. */
export interface RequestStats {
  route: string;
  model: string;
  endpoint: string;
  /** Time spent on the upstream call, when there was one (overhead = total - this). */
  upstreamMs?: number;
  /** Tokens the upstream reported for this request. */
  tokens?: TokenCount;
  /** An inference request: its usage is recorded for its key when it is over. */
  metered?: boolean;
  /** The model that served the request when it was a fallback of the one asked for. */
  servedModel?: string;
  /** The request's hold on its key's limits, settled when the request is over. */
  gate?: KeyGate | null;
  /** The response a POST /v1/responses made, and whether it runs in the background (the console's requests page). */
  responseId?: string;
  background?: boolean;
}

export type AppEnv = {
  Variables: {
    owner: string | null;
    /** The caller's api_keys entry; null without keys (or on an open health route). */
    apiKey: ApiKey | null;
    requestId: string;
    stats: RequestStats;
  };
};

/** Reads a JSON body with OpenAI-shaped errors for empty (unless `allowEmpty`: then undefined), oversized or malformed input. */
export async function readJsonBody(c: Context<AppEnv>, allowEmpty = false): Promise<unknown> {
  let text: string;
  try {
    text = await c.req.text();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw invalidRequest("Could not read the request body.", null, "invalid_body");
  }
  if (text.length === 0 && allowEmpty) return undefined;
  if (text.length === 0) throw invalidRequest("The request body is empty; send a JSON object.", null, "invalid_body");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw invalidRequest(
      "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
      null,
      "invalid_json",
    );
  }
  if (nestingDepth(body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw invalidRequest(`The JSON body is nested more than ${MAX_JSON_DEPTH} levels deep.`, null, "nesting_too_deep");
  }
  return body;
}

/**
 * JSON.parse accepts any depth, but JSON.stringify (upstream bodies, the store)
 * and every recursive walk overflow the stack somewhere past ~5000 levels: a
 * 20 KB body of brackets would be a 500. Real requests (JSON Schemas included)
 * stay far below this.
 */
export const MAX_JSON_DEPTH = 128;

/** Depth of a parsed JSON value, walked without recursion; stops counting past `limit`. */
export function nestingDepth(value: unknown, limit: number): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > max) max = depth;
    if (max > limit) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return max;
}

/** Only configured model names become metric labels: a client must not be able to mint series. */
export function labelModel(stats: RequestStats, models: Record<string, unknown>, body: unknown): void {
  const model = (body as { model?: unknown } | null)?.model;
  if (typeof model === "string" && Object.hasOwn(models, model)) stats.model = model;
}

/**
 * Links the client's connection to the upstream call: when the client goes
 * away, the upstream request is aborted and its endpoint slot freed at once.
 */
export class ClientLink {
  private readonly controller = new AbortController();
  private readonly outgoing: NodeOutgoing | undefined;
  private readonly client: AbortSignal | undefined;
  private readonly onGone = () => this.controller.abort(this.client!.reason);
  private readonly onClose = () => {
    // What @hono/node-server does on this event to abort `c.req.raw.signal`, same reasons.
    const incoming = this.outgoing!.req;
    if (incoming?.errored) this.controller.abort(incoming.errored.toString());
    else if (!this.outgoing!.writableFinished) this.controller.abort("Client connection prematurely closed.");
  };

  constructor(c: Context<AppEnv>) {
    // Under @hono/node-server, the ServerResponse's close event: reading `c.req.raw.signal`
    // costs a second AbortController (and EventTarget listeners) per request.
    // `on`, not `once`: a response's close comes once (node guards it), and `once` wraps every
    // listener in a closure of its own, kept per request for as long as a stream stays open.
    this.outgoing = nodeOutgoing(c);
    if (this.outgoing) this.outgoing.on("close", this.onClose);
    else {
      this.client = c.req.raw.signal;
      this.client.addEventListener("abort", this.onGone, { once: true });
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Aborts the upstream call (a stream body was cancelled). */
  readonly abort = (): void => this.controller.abort(new DOMException("client disconnected", "AbortError"));

  /** The answer is complete (JSON or error): the request's end must abort nothing. */
  detach(): void {
    if (this.outgoing) this.outgoing.removeListener("close", this.onClose);
    else this.client!.removeEventListener("abort", this.onGone);
  }
}

/** @hono/node-server's ServerResponse (`c.env.outgoing`). */
export type NodeOutgoing = import("node:http").ServerResponse;

/** The Node ServerResponse when running under @hono/node-server, else undefined (app.request in tests). */
export function nodeOutgoing(c: Context): NodeOutgoing | undefined {
  return (c.env as { outgoing?: NodeOutgoing } | undefined)?.outgoing;
}

/** The header naming the model that actually served a request (a fallback, or the model asked for). */
export const SERVED_MODEL_HEADER = "x-router-model";

/** Names the serving model on the answer (header) and for usage accounting. */
export function markServedModel(c: Context<AppEnv>, model: string | undefined): void {
  if (!model) return;
  const stats = c.get("stats");
  if (model !== stats.model) stats.servedModel = model;
  const outgoing = nodeOutgoing(c);
  if (outgoing) outgoing.setHeader(SERVED_MODEL_HEADER, model);
  else c.header(SERVED_MODEL_HEADER, model);
}

/** `include[]=a&include[]=b` (what the openai SDK sends) or `include=a&include=b` (the Python SDK's way). */
export function includeQuery(c: Context): string[] {
  return [...(c.req.queries("include[]") ?? []), ...(c.req.queries("include") ?? [])];
}
