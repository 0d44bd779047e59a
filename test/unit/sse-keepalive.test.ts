import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { KEEPALIVE_COMMENT, SseKeepalive } from "../../src/http/sse-keepalive.js";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

function stream(keepalive: SseKeepalive, writable = () => true) {
  const comments: number[] = [];
  const alive = keepalive.watch(() => comments.push(Date.now()), writable);
  return { comments, alive };
}

describe("SSE keepalive", () => {
  it("writes one comment per interval to a silent stream, none sooner", () => {
    const k = new SseKeepalive(() => 1000);
    const s = stream(k);
    vi.advanceTimersByTime(999);
    expect(s.comments).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(s.comments).toHaveLength(1);
    vi.advanceTimersByTime(4000);
    expect(s.comments).toHaveLength(5);
    // Never two closer than the interval.
    for (let i = 1; i < s.comments.length; i++) expect(s.comments[i]! - s.comments[i - 1]!).toBeGreaterThanOrEqual(1000);
  });

  it("leaves a stream that keeps writing alone, and never lets one stay silent longer than the interval", () => {
    const k = new SseKeepalive(() => 1000);
    const s = stream(k);
    let last = Date.now();
    for (let t = 0; t < 5000; t += 300) {
      vi.advanceTimersByTime(300);
      s.alive.wrote();
      last = Date.now();
    }
    expect(s.comments).toEqual([]);
    vi.advanceTimersByTime(2500);
    expect(s.comments.length).toBeGreaterThan(0);
    expect(s.comments[0]! - last).toBeLessThanOrEqual(1000);
  });

  it("forgets a stream that is done, and skips one that may not be written (ended, client not reading)", () => {
    const k = new SseKeepalive(() => 1000);
    let writable = false;
    const blocked = stream(k, () => writable);
    const done = stream(k);
    done.alive.done();
    expect(k.size).toBe(1);
    vi.advanceTimersByTime(3000);
    expect(blocked.comments).toEqual([]);
    expect(done.comments).toEqual([]);
    writable = true;
    vi.advanceTimersByTime(1000);
    expect(blocked.comments.length).toBeGreaterThan(0);
  });

  it("is off at 0, and its timer stops with the last stream", () => {
    expect(stream(new SseKeepalive(() => 0)).alive).toBeDefined();
    expect(vi.getTimerCount()).toBe(0);
    const k = new SseKeepalive(() => 1000);
    stream(k).alive.done();
    vi.advanceTimersByTime(1000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("takes a new interval (a config reload) at its next tick", () => {
    let every = 10_000;
    const k = new SseKeepalive(() => every);
    const s = stream(k);
    vi.advanceTimersByTime(5000); // first tick: seen
    every = 1000;
    vi.advanceTimersByTime(5000); // second tick at 10 s: idle, a comment; the timer now ticks every 500 ms
    expect(s.comments).toHaveLength(1);
    vi.advanceTimersByTime(1000);
    expect(s.comments).toHaveLength(2);
  });

  it("is an SSE comment: a line starting with a colon, ending the frame", () => {
    expect(KEEPALIVE_COMMENT).toBe(": keepalive\n\n");
  });
});
