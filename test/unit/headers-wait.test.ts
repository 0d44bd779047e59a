import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HEADERS_WAIT_MS, headersGone, waitForFirstWrite } from "../../src/http/headers-wait.js";
import type { NodeOutgoing } from "../../src/http/context.js";

/** A response as the queue sees it: counts its header flushes. */
function response(state: { writableEnded?: boolean; destroyed?: boolean } = {}) {
  const out = { writableEnded: false, destroyed: false, flushed: 0, flushHeaders: () => void out.flushed++, ...state };
  return out;
}
const asOut = (r: ReturnType<typeof response>) => r as unknown as NodeOutgoing;

describe("headers waiting for a stream's first write (one timer for every stream)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("flushes each stream's headers HEADERS_WAIT_MS after it started, in order, unless it wrote first", () => {
    const a = response();
    const b = response();
    const c = response();
    waitForFirstWrite(asOut(a));
    vi.advanceTimersByTime(20);
    const wb = waitForFirstWrite(asOut(b));
    vi.advanceTimersByTime(20);
    waitForFirstWrite(asOut(c));
    headersGone(wb); // b wrote: its headers left with its first events

    vi.advanceTimersByTime(HEADERS_WAIT_MS - 40 - 1);
    expect([a.flushed, b.flushed, c.flushed]).toEqual([0, 0, 0]);
    vi.advanceTimersByTime(1);
    expect([a.flushed, b.flushed, c.flushed]).toEqual([1, 0, 0]);
    vi.advanceTimersByTime(39);
    expect(c.flushed).toBe(0);
    vi.advanceTimersByTime(1);
    expect([a.flushed, b.flushed, c.flushed]).toEqual([1, 0, 1]);
    vi.advanceTimersByTime(10 * HEADERS_WAIT_MS);
    expect([a.flushed, b.flushed, c.flushed]).toEqual([1, 0, 1]);
  });

  it("leaves a stream that ended or was destroyed meanwhile alone", () => {
    const ended = response();
    const destroyed = response();
    waitForFirstWrite(asOut(ended));
    waitForFirstWrite(asOut(destroyed));
    ended.writableEnded = true;
    destroyed.destroyed = true;
    vi.advanceTimersByTime(HEADERS_WAIT_MS);
    expect([ended.flushed, destroyed.flushed]).toEqual([0, 0]);
  });

  it("serves streams started after the queue emptied, and many at once", () => {
    const first = response();
    waitForFirstWrite(asOut(first));
    vi.advanceTimersByTime(HEADERS_WAIT_MS);
    expect(first.flushed).toBe(1);
    const many = Array.from({ length: 3000 }, () => response());
    many.forEach((r, i) => {
      const w = waitForFirstWrite(asOut(r));
      if (i % 2 === 0) headersGone(w);
    });
    vi.advanceTimersByTime(10);
    const straggler = response(); // still queued behind the flushed ones (they are dropped from the queue's head)
    waitForFirstWrite(asOut(straggler));
    vi.advanceTimersByTime(HEADERS_WAIT_MS - 10);
    expect(many.filter((r) => r.flushed === 1).length).toBe(1500);
    expect(many.every((r, i) => r.flushed === (i % 2 === 0 ? 0 : 1))).toBe(true);
    expect(straggler.flushed).toBe(0);
    vi.advanceTimersByTime(10);
    expect(straggler.flushed).toBe(1);
    const late = response();
    waitForFirstWrite(asOut(late));
    vi.advanceTimersByTime(HEADERS_WAIT_MS);
    expect(late.flushed).toBe(1);
  });
});
