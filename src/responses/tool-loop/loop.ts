/**
 * What src/responses/tool-loop/ holds:
 * the tool loop (`openRun`, what the service and background jobs call instead of `connect`): which
 * tools the router runs (`hosted.ts`), the hosted tools as the model's function tools
 * (`toolbox.ts`), the loop of upstream rounds and tool runs as ONE response (`loop.ts`), the sink
 * that renumbers a round's events, streams hosted calls as `mcp_call` / `mcp_approval_request` /
 * `web_search_call` items and adds an answer's `url_citation`s (`round-sink.ts`), the MCP items
 * and events (`items.ts`), the response's MCP sessions with their metrics and spans (`mcp-
 * runner.ts`), MCP credentials sealed in a background job's payload (`secrets.ts`)
 */
/**
 * The tool loop: one response made of several upstream rounds. The model is shown the hosted
 * tools as plain function tools; when it calls them the router runs the calls (concurrently
 * within a round), appends them with their results and calls the model again, until it
 * answers, calls a client function tool (returned to the client, as OpenAI does with mixed
 * tools), asks for a call that needs approval, or a bound is hit (`max_tool_calls`: the
 * tools are withdrawn; `tools.max_rounds`: the response ends `incomplete`). Each round is one
 * `connect` (UpstreamAttempt: failover, fallbacks, health, metrics) read through the kind's
 * adapter into a RoundSink, so the client sees ONE response: one `response.created`,
 * continuous sequence numbers and output indexes, usage summed, one terminal event.
 */
import type { ResponseUsage as Usage } from "openai/resources/responses/responses";
import { ApiError, invalidRequest, toApiError } from "../../ops/errors.js";
import { abortError } from "../../upstream/body.js";
import type { Runtime } from "../../runtime/runtime.js";
import { SpanKind, type Span } from "../../tracing/index.js";
import { FILE_SEARCH_FUNCTION_NAME, WEB_SEARCH_FUNCTION_NAME, hostedFunctionName, hostedItemsForModel, refusedApprovals } from "../../translate/hosted-calls.js";
import { completedAt, responseSkeleton, emptyUsage } from "../../translate/skeleton.js";
import { unixSeconds } from "../../wire/clock.js";
import { HIDE_FILE_RESULTS, HIDE_WEB_SOURCES, clientText, replayableItems } from "../../translate/openai/rewrite.js";
import { emitted } from "../../wire/emitted.js";
import { EventJson } from "../../wire/event-json.js";
import type { EventSink } from "../../wire/sse-writer.js";
import type { EmittedResponse, Item, JsonObject, ResponseObject, StreamEvent } from "../../wire/types.js";
import { connect, recordTokenUsage, withSpentTokens, type Connection, type PumpOptions, type RoundUsage, type RunOutcome } from "../create/execute.js";
import type { Plan } from "../create/plan.js";
import type { HostedTools } from "./hosted.js";
import { approvalRequest, closedEvents, finishedCall, listToolsItem, listingEvents, openCall, searchingEvent, skippedCall, wholeCallEvents } from "./items.js";
import { timedTool, type McpRunner } from "./mcp-runner.js";
import { isAllowed } from "../../tools/mcp/index.js";
import { SearchError, isWebSearchType, resultsForModel, searchArguments, searchQueryFor, urlCitations, webSearchCallItem, type SearchResult } from "../../tools/search/index.js";
import { isFileSearchType } from "../../tools/file-search/index.js";
import { FileSearches } from "./file-searches.js";
import { RoundSink, type Cite, type Citation, type Sequence } from "./round-sink.js";
import { Toolbox, type HostedFunction } from "./toolbox.js";

interface PendingCall {
  index: number;
  fn: HostedFunction;
  open: Item;
}

interface ListFailure {
  label: string;
  message: string;
}

type Status = "completed" | "incomplete" | "failed" | "cancelled";

export class ToolLoop {
  /** The response's output so far, across rounds. */
  private readonly items: Item[] = [];
  /** Where each round's items start in `items`: each round is one model turn when replayed. */
  private readonly roundStarts: number[] = [];
  private readonly toolbox: Toolbox;
  private readonly count: Sequence = { next: 0 };
  private usage: Usage | null = null;
  private round = 0;
  private callsRun = 0;
  private upstreamMs = 0;
  /** Wall time spent waiting on tool servers: counted with the upstream time, as it is not the router's own. */
  private toolMs = 0;
  private span: Span | undefined;
  /** Each round's usage under its own model and endpoint (token metrics count them so). */
  private readonly rounds: RoundUsage[] = [];
  /** Whether any round hid encrypted reasoning the client did not ask for (rounds may differ after a failover or fallback). */
  private hideEncrypted = false;
  /** Every web search result of this response (citations resolve against them) and each search's text for the model. */
  private readonly searchResults: SearchResult[] = [];
  private readonly searchOutputs = new Map<string, string>();
  /** The response's file searches (their hits, for citations). */
  private readonly fileSearches: FileSearches;

  constructor(
    private readonly rt: Runtime,
    private readonly plan: Plan,
    private readonly hosted: HostedTools,
    private readonly runner: McpRunner,
    private readonly signal: AbortSignal,
    private readonly stream: boolean,
    private readonly initialStatus: "in_progress" | "queued",
  ) {
    const taken = new Set<string>();
    for (const t of hosted.rest) if (t.type === "function" && typeof t.name === "string") taken.add(t.name);
    this.toolbox = new Toolbox(taken);
    if (hosted.webSearch) this.toolbox.addWebSearch(hosted.webSearch.tool, hosted.webSearch.provider);
    if (hosted.fileSearch) this.toolbox.addFileSearch(hosted.fileSearch.tool, hosted.fileSearch.library, hosted.fileSearch.owner);
    this.fileSearches = new FileSearches(rt, plan.owner, signal);
  }

  /**
   * Before the first round: each server's tools (listed now, or from the `mcp_list_tools` the
   * conversation already holds for its label), then the calls the client approved since the
   * last turn. Resolves with the listing that failed, if one did.
   */
  async prepare(): Promise<ListFailure | null> {
    const started = performance.now();
    try {
      return await this.listAndApprove();
    } finally {
      this.toolMs += performance.now() - started;
    }
  }

  private async listAndApprove(): Promise<ListFailure | null> {
    const prior = [...this.plan.history, ...this.plan.input];
    const listings = await Promise.all(
      this.hosted.servers.map(async (server) => {
        const earlier = lastListing(prior, server.label);
        // A listing in the history is the client's word (sent back, or added to a conversation): it
        // may stand for the client's own server, never for the operator's, whose filters it could
        // widen (a tool claimed read-only). An operator server is listed again, on its shared session.
        if (earlier && !server.operator) return { server, tools: earlier, item: null, failure: null };
        const id = this.rt.ids("mcpl");
        try {
          // The listing shows what the model may use, as OpenAI's does with allowed_tools.
          const tools = (await this.runner.list(server)).filter((t) => server.allowed.every((f) => isAllowed(f, t)));
          return { server, tools, item: earlier ? null : listToolsItem(id, server.label, tools), failure: null };
        } catch (err) {
          const message = (err as Error).message;
          return { server, tools: [], item: listToolsItem(id, server.label, [], connectorMessage({ label: server.label, message })), failure: message };
        }
      }),
    );
    let failure: ListFailure | null = null;
    for (const l of listings) {
      this.toolbox.addServer(l.server, l.tools);
      if (l.item) this.items.push(l.item);
      if (l.failure !== null && !failure) failure = { label: l.server.label, message: l.failure };
    }
    if (failure) return failure;
    await this.runApproved(prior);
    return null;
  }

  /** The calls the client approved (`mcp_approval_response` in this turn's input) run before the model is called. */
  private async runApproved(prior: Item[]): Promise<void> {
    const approved = this.plan.input.filter((i) => i.type === "mcp_approval_response" && i.approve === true);
    const runs: Promise<void>[] = [];
    for (const answer of approved) {
      const requestId = answer.approval_request_id;
      const request = prior.find((i) => i.type === "mcp_approval_request" && i.id === requestId);
      if (!request) throw invalidRequest(`No mcp_approval_request with id '${String(requestId)}' was found in the conversation.`, "input", "invalid_value");
      if (prior.some((i) => i.type === "mcp_call" && i.approval_request_id === requestId)) continue; // already run
      const fn = this.toolbox.find(String(request.server_label), String(request.name));
      const args = typeof request.arguments === "string" ? request.arguments : "{}";
      if (!fn) {
        const message = `The tool '${String(request.name)}' of MCP server '${String(request.server_label)}' is not available in this request.`;
        this.items.push({ id: this.rt.ids("mcp"), type: "mcp_call", approval_request_id: requestId, arguments: args, error: { type: "mcp_protocol_error", code: -32601, message }, name: request.name, output: null, server_label: request.server_label, status: "failed" });
        continue;
      }
      const index = this.items.length;
      const open = openCall(this.rt.ids("mcp"), fn, args, String(requestId));
      this.items.push(open);
      runs.push(this.runOne({ index, fn, open }));
    }
    await Promise.all(runs);
  }

  /** Connects the next round (errors before the first byte reach the caller). */
  async connectRound(): Promise<Connection> {
    this.round++;
    this.span?.end();
    this.span = this.rt.tracing.startChild(`tool loop round ${this.round}`, SpanKind.INTERNAL, { "router.tool_loop.round": this.round });
    const go = () => connect(this.rt, this.roundPlan(), this.signal, this.stream, this.round === 1 ? this.initialStatus : "in_progress", this.round > 1);
    try {
      return await (this.span ? this.rt.tracing.within(this.span, go) : go());
    } catch (err) {
      this.span?.end(); // the round never started
      this.span = undefined;
      throw err;
    }
  }

  /** The plan one round sends: the hosted tools as functions, every earlier run as the model's call and its output. */
  private roundPlan(): Plan {
    const { plan } = this;
    const budgetLeft = this.maxToolCalls() - this.callsRun > 0;
    const tools = budgetLeft ? [...this.hosted.rest, ...this.toolbox.functions()] : this.hosted.rest;
    const refused = refusedApprovals([...plan.history, ...plan.input, ...this.items]);
    const history = hostedItemsForModel(plan.history, { refused });
    // Converted turn by turn (the client's input, then each round), so one round's calls are not merged with the next's.
    const opts = { refused, outputs: this.searchOutputs };
    const bounds = [0, ...this.roundStarts, this.items.length];
    const input = [...hostedItemsForModel(plan.input, opts)]; // a copy: it may be plan.input itself
    for (let k = 0; k + 1 < bounds.length; k++) input.push(...hostedItemsForModel(this.items.slice(bounds[k], bounds[k + 1]), opts));
    const req = { ...plan.req, tools, input: replayableItems(input) as typeof plan.req.input };
    const choice = this.toolChoice(tools.length > 0);
    if (choice === undefined) delete req.tool_choice;
    else req.tool_choice = choice;
    return { ...plan, req, history, input, compacted: this.round === 1 ? plan.compacted : undefined };
  }

  /** tool_choice for a round: an `mcp`, web search or file search choice forces its function (or any tool: `required`) in the first round; after it, only `none` or `auto` (a forced call every round would never end). */
  private toolChoice(haveTools: boolean): Plan["req"]["tool_choice"] {
    const c = this.plan.req.tool_choice as JsonObject | string | undefined | null;
    if (c == null || c === "none" || c === "auto") return c ?? undefined;
    if (!haveTools) return "none";
    if (this.round > 1) return "auto";
    if (typeof c === "object" && (c.type === "mcp" || isWebSearchType(c.type) || (this.hosted.fileSearch && isFileSearchType(c.type)))) {
      // The one function the choice names, when it names one the model is shown; else any tool.
      const name = c.type === "mcp" ? (typeof c.name === "string" ? hostedFunctionName(String(c.server_label ?? ""), c.name) : null) : isFileSearchType(c.type) ? FILE_SEARCH_FUNCTION_NAME : WEB_SEARCH_FUNCTION_NAME;
      return name && this.toolbox.get(name) ? { type: "function", name } : "required";
    }
    return c as Plan["req"]["tool_choice"];
  }

  private maxToolCalls(): number {
    const m = this.plan.req.max_tool_calls;
    return typeof m === "number" && m >= 0 ? m : Number.POSITIVE_INFINITY;
  }

  /** Runs the rounds; the first is already connected. */
  async run(first: Connection, sink: EventSink | null, opts: PumpOptions): Promise<RunOutcome> {
    if (sink) {
      this.send(sink, this.opening());
      this.items.forEach((item, i) => this.send(sink, item.type === "mcp_list_tools" ? listingEvents(item, i, this.seq) : wholeCallEvents(item, i, this.seq)));
      sink.flush?.();
    }
    let conn = first;
    const roundOpts = new RoundOptions(opts);
    for (;;) {
      const rs = sink ? new RoundSink(sink, this.count, this.items.length, this.toolbox, this.rt.ids, this.cite()) : null;
      let out: RunOutcome;
      try {
        out = await (this.span ? this.rt.tracing.within(this.span, () => conn.pump(rs, roundOpts)) : conn.pump(rs, roundOpts));
      } finally {
        this.span?.end();
        this.span = undefined;
      }
      this.account(out);
      const { pending, stops } = this.take(out.response.output, rs, sink);
      const status = out.response.status;
      if (sink && out.terminal === null) return this.end(out, sink, "cancelled", pending, "The response was cancelled before the call ran.");
      if (status !== "completed") return this.end(out, sink, status as Status, pending, "The response ended before the call ran.");
      if (pending.length > 0 && this.round >= this.rt.config.tools.max_rounds) {
        return this.end(out, sink, "incomplete", pending, `The response reached the router's limit of ${this.rt.config.tools.max_rounds} model rounds (tools.max_rounds).`);
      }
      await this.runRound(pending, sink);
      if (this.signal.aborted) {
        // Cancelled or shut down while the tools ran: as a round would, keep what was made only when asked to.
        if (!opts.keepPartialOnAbort) throw this.spent(abortError(this.signal.reason), out);
        return this.end(out, null, "cancelled", [], "");
      }
      if (pending.length === 0 || stops) return this.end(out, sink, "completed", [], "");
      try {
        conn = await this.connectRound();
      } catch (err) {
        if (!sink) throw this.spent(err, out);
        const e = toApiError(err);
        return this.end(out, sink, "failed", [], "", { code: e.code ?? "server_error", message: e.message });
      }
    }
  }

  /**
   * A JSON response that fails after its earlier rounds answered ends as an error, with no
   * response to account: the tokens those rounds spent are counted here and ride on the error.
   */
  private spent(err: unknown, last: RunOutcome): unknown {
    return withSpentTokens(err, recordTokenUsage(this.rt, { ...last, rounds: this.rounds }, this.plan.owner));
  }

  /** A stream whose tool listing failed: the listing's failure, then `response.failed`. */
  failedRun(failure: ListFailure): Connection {
    return {
      endpoint: { name: "none" },
      model: this.plan.model,
      pump: async (sink) => {
        if (sink) {
          this.send(sink, this.opening());
          this.items.forEach((item, i) => this.send(sink, listingEvents(item, i, this.seq)));
        }
        const error = { code: "external_connector_error", message: connectorMessage(failure) };
        const response = this.combined(null, "failed", error, null);
        return { response, hideEncryptedReasoning: false, terminal: sink ? this.terminal(response, false) : null, endpoint: "none", model: this.plan.model, upstreamMs: this.upstreamMs + this.toolMs };
      },
    };
  }

  private readonly seq = () => this.count.next++;
  /** The text of the events the loop writes itself. */
  private readonly json = new EventJson();

  private send(sink: EventSink, events: StreamEvent[]): void {
    for (const e of events) sink.send(e.type, this.json.text(e));
  }

  private skeleton(status: ResponseObject["status"]): ResponseObject {
    const p = this.plan;
    return responseSkeleton(p.req, { id: p.id, createdAt: p.createdAt, model: p.model, status, previousResponseId: p.previousResponseId });
  }

  /** response.created and response.in_progress: one snapshot for both unless the response starts queued (serialised once, EventJson). */
  private opening(): StreamEvent[] {
    const inProgress = this.skeleton("in_progress") as unknown as EmittedResponse;
    const created = this.initialStatus === "queued" ? (this.skeleton("queued") as unknown as EmittedResponse) : inProgress;
    return [emitted({ type: "response.created", response: created, sequence_number: this.seq() }), emitted({ type: "response.in_progress", response: inProgress, sequence_number: this.seq() })];
  }

  /** Citations for the answers of a round, when earlier rounds searched the web or the files. */
  private cite(): Cite | null {
    const files = this.fileSearches.citer();
    if (this.searchResults.length === 0) return files;
    const results = this.searchResults.slice();
    if (!files) return (text) => urlCitations(text, results);
    return (text) => [...urlCitations(text, results), ...files(text)].sort((a, b) => citedAt(a) - citedAt(b));
  }

  private account(out: RunOutcome): void {
    this.upstreamMs += out.upstreamMs;
    // A round on a backend that hides encrypted reasoning streamed its items without it: the whole response hides it.
    this.hideEncrypted ||= out.hideEncryptedReasoning;
    this.rounds.push({ model: out.model, endpoint: out.endpoint, usage: out.response.usage });
    const u = out.response.usage as Usage | null | undefined;
    if (!u) return;
    const sum = this.usage ?? emptyUsage();
    sum.input_tokens += u.input_tokens ?? 0;
    sum.output_tokens += u.output_tokens ?? 0;
    sum.total_tokens += u.total_tokens ?? 0;
    sum.input_tokens_details.cached_tokens += u.input_tokens_details?.cached_tokens ?? 0;
    // Prompt-cache writes (Anthropic reports them): the price of later hits, summed like the reads.
    const written = sum.input_tokens_details as { cache_write_tokens?: number };
    written.cache_write_tokens = (written.cache_write_tokens ?? 0) + ((u.input_tokens_details as { cache_write_tokens?: number } | undefined)?.cache_write_tokens ?? 0);
    sum.output_tokens_details.reasoning_tokens += u.output_tokens_details?.reasoning_tokens ?? 0;
    this.usage = sum;
  }

  /**
   * A round's output joins the response: hosted function calls become their `mcp_call` (to run)
   * or `mcp_approval_request` items. `stops`: the loop ends after this round (a client function
   * call or an approval request the client must answer first).
   */
  private take(output: Item[], rs: RoundSink | null, sink: EventSink | null): { pending: PendingCall[]; stops: boolean } {
    this.roundStarts.push(this.items.length);
    const pending: PendingCall[] = [];
    let stops = false;
    const cite = this.cite();
    for (const item of output) {
      const fn = item.type === "function_call" ? this.toolbox.get(item.name) : undefined;
      if (!fn) {
        if (item.type === "function_call") stops = true;
        this.items.push(cite ? annotated(item, cite) : item);
        continue;
      }
      const id = rs?.converted.get(item.id as string)?.id ?? this.rt.ids(fn.kind === "web_search" ? "ws" : fn.kind === "file_search" ? "fs" : fn.approval ? "mcpr" : "mcp");
      const args = typeof item.arguments === "string" ? item.arguments : "";
      const index = this.items.length;
      if (fn.kind === "web_search") {
        const open: Item = { id, type: "web_search_call", status: "in_progress", action: { type: "search", query: searchArguments(args) ?? "" } };
        this.items.push(open);
        pending.push({ index, fn, open });
        continue;
      }
      if (fn.kind === "file_search") {
        const open = this.fileSearches.open(id, args);
        this.items.push(open);
        pending.push({ index, fn, open });
        continue;
      }
      if (fn.approval) {
        const request = approvalRequest(id, fn, args);
        this.items.push(request);
        if (sink) this.send(sink, closedEvents(request, index, this.seq));
        stops = true;
        continue;
      }
      const open = openCall(id, fn, args);
      this.items.push(open);
      pending.push({ index, fn, open });
    }
    return { pending, stops };
  }

  /** Runs a round's calls concurrently (those past max_tool_calls are not run), then streams their outcomes in order. */
  private async runRound(pending: PendingCall[], sink: EventSink | null): Promise<void> {
    const started = performance.now();
    const budget = this.maxToolCalls() - this.callsRun;
    if (sink) {
      pending.forEach((p, k) => {
        if (k < budget && p.fn.kind !== "mcp") this.send(sink, [searchingEvent(p.open, p.index, this.seq)]);
      });
      sink.flush?.();
    }
    await Promise.all(
      pending.map((p, k) => {
        if (k < budget) return this.runOne(p);
        this.items[p.index] = this.skipped(p, "Not run: the response reached its max_tool_calls.");
        return undefined;
      }),
    );
    this.toolMs += performance.now() - started;
    if (!sink) return;
    for (const p of pending) this.send(sink, closedEvents(this.clientView(this.items[p.index]!), p.index, this.seq));
    sink.flush?.();
  }

  /** Whether the client sees no web search sources (it did not include them; the stored response keeps them). */
  private get hideSources(): boolean {
    return !(this.plan.req.include ?? []).includes("web_search_call.action.sources");
  }

  /** Whether the client sees no file search results (it did not include them: null, as OpenAI shows them; the stored response keeps them). */
  private get hideFileResults(): boolean {
    return !(this.plan.req.include ?? []).includes("file_search_call.results");
  }

  /** An item as the client sees it streamed: a search without the sources or results it did not include. */
  private clientView(item: Item): Item {
    if (item.type === "file_search_call") return item.results != null && this.hideFileResults ? { ...item, results: null } : item;
    if (item.type !== "web_search_call" || !this.hideSources) return item;
    const { sources: _hidden, ...action } = (item.action ?? {}) as JsonObject;
    return { ...item, action };
  }

  private async runOne(p: PendingCall): Promise<void> {
    this.callsRun++;
    const fn = p.fn;
    if (fn.kind === "web_search") return this.search(p, fn);
    if (fn.kind === "file_search") {
      this.items[p.index] = await this.fileSearches.run(p.open, fn, this.searchOutputs);
      return;
    }
    const result = await this.runner.call(fn.server, fn.tool.name, p.open.arguments as string);
    this.items[p.index] = finishedCall(p.open, result);
  }

  /** One web search: the item with its sources (kept in the stored response; streamed only when included: clientView), the model's text, the results for citations. */
  private async search(p: PendingCall, fn: Extract<HostedFunction, { kind: "web_search" }>): Promise<void> {
    const query = (p.open.action as { query: string }).query;
    const id = p.open.id as string;
    if (!query) {
      this.items[p.index] = webSearchCallItem(id, "", [], true, "failed") as unknown as Item;
      this.searchOutputs.set(id, "The web search was not run: the call named no query.");
      return;
    }
    try {
      const results = await timedTool(this.rt, "web_search_call", fn.provider.name, () => fn.provider.search(searchQueryFor(fn.tool, query), this.signal), (r, err) => (r ? "ok" : err instanceof SearchError && err.failure === "timeout" ? "timeout" : "error"));
      this.items[p.index] = webSearchCallItem(id, query, results, true, "completed") as unknown as Item;
      this.searchOutputs.set(id, resultsForModel(results));
      this.searchResults.push(...results);
    } catch (err) {
      this.items[p.index] = webSearchCallItem(id, query, [], true, "failed") as unknown as Item;
      this.searchOutputs.set(id, `The web search failed: ${(err as Error).message}`);
    }
  }

  private skipped(p: PendingCall, why: string): Item {
    if (p.fn.kind === "file_search") {
      this.searchOutputs.set(p.open.id as string, why);
      return { ...p.open, status: "incomplete" };
    }
    if (p.fn.kind === "web_search") {
      this.searchOutputs.set(p.open.id as string, why);
      return { ...p.open, status: "failed" };
    }
    return skippedCall(p.open, why);
  }

  private end(last: RunOutcome, sink: EventSink | null, status: Status, pending: PendingCall[], why: string, error?: { code: string; message: string }): RunOutcome {
    for (const p of pending) {
      this.items[p.index] = this.skipped(p, why);
      if (sink) this.send(sink, closedEvents(this.items[p.index]!, p.index, this.seq));
    }
    const err = error ?? (status === "failed" ? ((last.response.error as { code: string; message: string } | null) ?? { code: "server_error", message: "The response failed." }) : null);
    const incomplete = status === "incomplete" ? (pending.length && why ? { reason: "max_output_tokens" } : (last.response.incomplete_details ?? null)) : null;
    const response = this.combined(last.response, status, err, incomplete);
    const hideSearchSources =
      (this.hideSources && this.items.some((i) => i.type === "web_search_call") ? HIDE_WEB_SOURCES : 0) | (this.hideFileResults && this.items.some((i) => i.type === "file_search_call") ? HIDE_FILE_RESULTS : 0);
    const terminal = sink && status !== "cancelled" ? this.terminal(response, this.hideEncrypted, hideSearchSources) : null;
    return { response, hideEncryptedReasoning: this.hideEncrypted, hideSearchSources, terminal, endpoint: last.endpoint, model: last.model, upstreamMs: this.upstreamMs + this.toolMs, rounds: this.rounds };
  }

  /** The one response: the last round's object with the client's own tools, every round's output, the summed usage. */
  private combined(last: ResponseObject | null, status: Status, error: { code: string; message: string } | null, incomplete: unknown): ResponseObject {
    const skel = this.skeleton(status);
    const base = last ?? skel;
    return { ...base, id: skel.id, status, completed_at: completedAt(status, unixSeconds), error, incomplete_details: incomplete, tools: skel.tools, tool_choice: skel.tool_choice, output: this.items, usage: this.usage } as ResponseObject;
  }

  private terminal(response: ResponseObject, hide: boolean, hideSources: number = 0): { type: string; data: string } {
    const type = response.status === "completed" ? "response.completed" : response.status === "incomplete" ? "response.incomplete" : "response.failed";
    const event = { type, response, sequence_number: this.seq() };
    return { type, data: clientText(event, hide, hideSources) };
  }
}

/**
 * A round's pump options: the response's own, read when the pump needs them (a shutdown deadline
 * sets `keepPartialOnAbort` mid-stream: StreamShutdown), and its terminal event unsent (the loop
 * sends one for the whole response). A copy of the options would freeze them as they were.
 */
class RoundOptions implements PumpOptions {
  readonly terminalUnsent = true;
  constructor(private readonly response: PumpOptions) {}

  get keepPartialOnAbort(): boolean | undefined {
    return this.response.keepPartialOnAbort;
  }
}

export function connectorMessage(f: ListFailure): string {
  return `Error retrieving tool list from MCP server: '${f.label}'. ${f.message}`;
}

/** 424 as OpenAI answers it when an MCP server's tools cannot be listed. */
export function connectorError(f: ListFailure): ApiError {
  return new ApiError(424, connectorMessage(f), { type: "external_connector_error", param: "tools", code: "external_connector_error" });
}

/** Where a citation sits in its text, to order url and file citations together. */
function citedAt(c: Citation): number {
  return c.type === "url_citation" ? c.start_index : c.index;
}

/** A message with the url_citation annotations of its text parts (what the stream sent for it). */
function annotated(item: Item, cite: Cite): Item {
  if (item.type !== "message" || !Array.isArray(item.content)) return item;
  const content = (item.content as { type?: string; text?: string }[]).map((part) => (part.type === "output_text" ? { ...part, annotations: cite(part.text ?? "") } : part));
  return { ...item, content };
}

/** The tools of the latest successful `mcp_list_tools` for a server in the conversation. */
function lastListing(items: Item[], label: string) {
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i]!;
    if (it.type === "mcp_list_tools" && it.server_label === label && !it.error && Array.isArray(it.tools)) {
      return (it.tools as { name: string; description?: string | null; input_schema?: unknown; annotations?: unknown }[]).map((t) => ({ name: t.name, description: t.description ?? null, input_schema: t.input_schema ?? {}, annotations: t.annotations ?? null }));
    }
  }
  return null;
}
