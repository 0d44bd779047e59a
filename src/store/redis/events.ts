import type { StreamEvent } from "../../wire/types.js";
import { blockingReader, hashTag, redisCall, toStoreError, waitReady, type RedisClient } from "./client.js";
import { storeWrite, type DurableWriter } from "./durable.js";
import { EventOrderError, isTerminalEvent, type EventLog } from "../types.js";

type StreamEntries = [id: string, fields: string[]][];

/** XADD + PEXPIRE only while the stream exists: one round trip, so a deleted log stays deleted. */
const APPEND_IF_EXISTS = `
if redis.call("EXISTS", KEYS[1]) == 0 then return 0 end
redis.call("XADD", KEYS[1], ARGV[1], "e", ARGV[2])
redis.call("PEXPIRE", KEYS[1], ARGV[3])
return 1`;

/**
 * Stream events in Redis Streams, one stream per response under `${prefix}events:${id}`
 * with a TTL refreshed on every append. An event's stream id is `${sequence_number}-1`,
 * so "events after N" is a plain exclusive range, Redis itself rejects out-of-order
 * appends, and followers on any instance use XREAD BLOCK on their own connection.
 */
export class RedisEventLog implements EventLog {
  constructor(
    private readonly client: RedisClient,
    private readonly opts: { prefix: string; ttlMs: number; readyTimeoutMs?: number; blockMs?: number; durable?: DurableWriter },
  ) {}

  /** Tagged by the response id on a cluster, as its record is: a script may touch both. */
  private key(responseId: string): string {
    return `${this.opts.prefix}events:${hashTag(this.client, responseId)}`;
  }

  async append(responseId: string, event: StreamEvent): Promise<void> {
    const seq = event.sequence_number;
    if (!Number.isSafeInteger(seq) || seq < 0) throw new EventOrderError(responseId, seq);
    const key = this.key(responseId);
    const json = JSON.stringify(event);
    const results = await redisCall(
      this.client,
      "events.append",
      () => this.client.multi().xadd(key, `${seq}-1`, "e", json).pexpire(key, this.opts.ttlMs).exec(),
      this.opts.readyTimeoutMs,
    );
    const xaddError = results?.[0]?.[0];
    if (xaddError) {
      if (/equal or smaller/i.test(xaddError.message)) throw new EventOrderError(responseId, seq);
      throw toStoreError("events.append", xaddError);
    }
  }

  async appendIfExists(responseId: string, event: StreamEvent): Promise<boolean> {
    const seq = event.sequence_number;
    if (!Number.isSafeInteger(seq) || seq < 0) throw new EventOrderError(responseId, seq);
    const key = this.key(responseId);
    const json = JSON.stringify(event);
    try {
      const append = (client: RedisClient) => client.eval(APPEND_IF_EXISTS, 1, key, `${seq}-1`, json, this.opts.ttlMs);
      // A terminal event is the end followers wait for: under `durability: replica` it waits for
      // a replica like the final record before it, so a failover cannot keep the one and lose the other.
      const durable = isTerminalEvent(event) ? this.opts.durable : undefined;
      const done = await storeWrite(this.client, durable, "events.append", key, append, (n) => n === 1, this.opts.readyTimeoutMs);
      return done === 1;
    } catch (err) {
      if (/equal or smaller/i.test((err as Error).message ?? "")) throw new EventOrderError(responseId, seq);
      throw toStoreError("events.append", err);
    }
  }

  async read(responseId: string, afterSeq: number): Promise<StreamEvent[]> {
    const key = this.key(responseId);
    const out: StreamEvent[] = [];
    let start = afterSeq < 0 ? "-" : `(${Math.floor(afterSeq)}-1`;
    for (;;) {
      const page = (await redisCall(this.client, "events.read", () => this.client.xrange(key, start, "+", "COUNT", 1000), this.opts.readyTimeoutMs)) as StreamEntries;
      for (const [, fields] of page) out.push(parseEvent(fields));
      if (page.length < 1000) return out;
      start = `(${page[page.length - 1][0]}`;
    }
  }

  async *follow(responseId: string, afterSeq: number, signal: AbortSignal): AsyncIterable<StreamEvent> {
    if (signal.aborted) return;
    const blockMs = this.opts.blockMs ?? 5_000;
    // XREAD BLOCK holds its connection, so every follower gets its own.
    const conn = blockingReader(this.client, blockMs + 2_000);
    const onAbort = () => conn.disconnect();
    signal.addEventListener("abort", onAbort);
    try {
      await waitReady(conn, this.opts.readyTimeoutMs ?? 1_000, "events.follow");
      const key = this.key(responseId);
      let lastId = afterSeq < 0 ? "0-0" : `${Math.floor(afterSeq)}-1`;
      while (!signal.aborted) {
        let res: [key: string, entries: StreamEntries][] | null;
        try {
          res = (await conn.xread("COUNT", 1000, "BLOCK", blockMs, "STREAMS", key, lastId)) as typeof res;
        } catch (err) {
          if (signal.aborted) return;
          throw toStoreError("events.follow", err);
        }
        for (const [, entries] of res ?? []) {
          for (const [id, fields] of entries) {
            lastId = id;
            const event = parseEvent(fields);
            yield event;
            if (isTerminalEvent(event) || signal.aborted) return;
          }
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      throw toStoreError("events.follow", err);
    } finally {
      signal.removeEventListener("abort", onAbort);
      conn.disconnect();
    }
  }

  async delete(responseId: string): Promise<void> {
    await redisCall(this.client, "events.delete", () => this.client.del(this.key(responseId)), this.opts.readyTimeoutMs);
  }

  async close(): Promise<void> {}
}

function parseEvent(fields: string[]): StreamEvent {
  // Fields are [name, value, ...]; the event is the value of "e".
  const i = fields.indexOf("e");
  return JSON.parse(fields[i + 1]) as StreamEvent;
}
