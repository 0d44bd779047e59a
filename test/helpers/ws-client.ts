import OpenAI from "openai";
import { WebSocket } from "ws";
import { ResponsesWS } from "openai/resources/responses/ws";
import type { ResponsesClientEvent } from "openai/resources/responses/responses";

/** Events that end one response on a socket (an `error` event answers a request that never started). */
const TERMINAL = new Set(["response.completed", "response.failed", "response.incomplete", "error"]);

export type WsEvent = { type: string; stream_id?: string; sequence_number?: number; [k: string]: any };

/**
 * The openai package's ResponsesWS client on a router, with the events it received kept in
 * order, and a way to wait for one response's events (by lane).
 */
export class WsClient {
  readonly ws: ResponsesWS;
  readonly events: WsEvent[] = [];
  closed: { code: number; reason: string } | null = null;
  private readonly waiters = new Set<() => void>();

  reconnected = 0;

  constructor(routerUrl: string, apiKey = "test-key", options?: ConstructorParameters<typeof ResponsesWS>[1]) {
    const client = new OpenAI({ baseURL: `${routerUrl}/v1`, apiKey, maxRetries: 0 });
    this.ws = new ResponsesWS(client, options);
    this.ws.on("reconnected", () => {
      this.reconnected++;
      this.wake();
    });
    this.ws.on("event", (e) => {
      this.events.push(e as unknown as WsEvent);
      this.wake();
    });
    // Error events arrive through "event" too; without a listener the SDK rejects a promise nobody holds.
    this.ws.on("error", () => {});
    this.ws.on("close", (code: number, reason: string) => {
      this.closed = { code, reason: String(reason ?? "") };
      this.wake();
    });
  }

  private wake(): void {
    for (const w of this.waiters) w();
  }

  /** Resolves when `check` holds over what arrived (re-checked on each event or close). */
  until<T>(what: string, check: () => T | undefined | false, withinMs = 15_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const tryNow = () => {
        const v = check();
        if (v) {
          clearTimeout(timer);
          this.waiters.delete(tryNow);
          resolve(v);
        } else if (this.closed) {
          clearTimeout(timer);
          this.waiters.delete(tryNow);
          reject(new Error(`socket closed (${this.closed.code} ${this.closed.reason}) waiting for ${what}`));
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(tryNow);
        reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.events.map((e) => e.type))}`));
      }, withinMs);
      this.waiters.add(tryNow);
      tryNow();
    });
  }

  /** Sends a response.create and returns its events, up to and including its terminal event. */
  async create(body: Omit<ResponsesClientEvent.ResponseCreate, "type"> & Record<string, unknown>): Promise<WsEvent[]> {
    const from = this.events.length;
    this.send({ type: "response.create", ...body });
    return this.collect(from, body.stream_id as string | undefined);
  }

  /** The events of one lane from index `from` on, once its terminal event arrived. */
  collect(from: number, streamId?: string): Promise<WsEvent[]> {
    return this.until(`a terminal event on lane ${streamId ?? "(default)"}`, () => {
      const mine = this.events.slice(from).filter((e) => e.stream_id === streamId);
      const end = mine.findIndex((e) => TERMINAL.has(e.type));
      return end >= 0 ? mine.slice(0, end + 1) : undefined;
    });
  }

  send(event: Record<string, unknown>): void {
    this.ws.send(event as unknown as ResponsesClientEvent);
  }

  waitClosed(): Promise<{ code: number; reason: string }> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`socket did not close; got ${JSON.stringify(this.events.map((e) => e.type))}`)), 15_000);
      const check = () => {
        if (this.closed) {
          clearTimeout(timer);
          this.waiters.delete(check);
          resolve(this.closed);
        }
      };
      this.waiters.add(check);
      check();
    });
  }

  close(): void {
    this.ws.close({ code: 1000, reason: "done" });
  }
}

/** The final response of one response's events. */
export function finalResponse(events: WsEvent[]): any {
  const last = events.at(-1)!;
  if (!last.type.startsWith("response.")) throw new Error(`the response ended with ${JSON.stringify(last)}`);
  return last.response;
}

/** The HTTP status and body a refused upgrade got. */
export function upgradeStatus(url: string, headers: Record<string, string>): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ code: res.statusCode ?? 0, body }));
    });
    ws.on("open", () => {
      ws.close();
      reject(new Error("the upgrade was accepted"));
    });
    // After an unexpected response ws reports an error too; before one, the connection failed.
    ws.on("error", (err) => reject(err));
  });
}
