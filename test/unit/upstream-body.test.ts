import { AsyncLocalStorage } from "node:async_hooks";
import { describe, expect, it } from "vitest";
import { UpstreamBody } from "../../src/upstream/body.js";

/** A body with a fake upstream call: what the body asked of it is recorded. */
function fakeBody() {
  const calls = { resumed: 0, aborted: [] as Error[], finished: 0 };
  const body = new UpstreamBody({
    resume: () => calls.resumed++,
    abort: (err) => calls.aborted.push(err),
    finished: () => calls.finished++,
  });
  return { body, calls };
}

function recorder() {
  const seen: string[] = [];
  return {
    seen,
    consumer: {
      onChunk: (c: Buffer) => seen.push(c.toString()),
      onEnd: () => seen.push("<end>"),
      onError: (e: unknown) => seen.push(`<error ${(e as Error).message}>`),
    },
  };
}

/** After the socket read's turn: the microtask the body delivers in has run. */
const afterRead = () => Promise.resolve();

describe("UpstreamBody", () => {
  it("passes over an empty read: it reaches no consumer and never pauses the upstream (undici hands one over when it resumes at a span's end)", async () => {
    const { body } = fakeBody();
    const r = recorder();
    body.attach({ ...r.consumer, onChunk: (c) => (r.consumer.onChunk(c), body.pause()) });
    expect(body.push(Buffer.alloc(0))).toBe(true);
    expect(body.push(Buffer.from("a"))).toBe(true);
    await afterRead();
    expect(r.seen).toEqual(["a"]); // the consumer paused after a real read
    expect(body.push(Buffer.from("b"))).toBe(false);
    expect(body.push(Buffer.alloc(0))).toBe(true); // paused, an empty read still lets the parser go on
    body.resume();
    expect(r.seen).toEqual(["a", "b"]);
  });

  it("holds reads that arrive before the consumer attaches and hands them over at once, as one chunk, then the end", () => {
    const { body, calls } = fakeBody();
    expect(body.push(Buffer.from("a"))).toBe(true);
    expect(body.push(Buffer.from("b"))).toBe(true);
    body.complete();
    expect(calls.finished).toBe(0);
    const r = recorder();
    body.attach(r.consumer);
    expect(r.seen).toEqual(["ab", "<end>"]);
    expect(calls.finished).toBe(1);
  });

  it("calls an attached consumer once the read's turn is over, with all that read brought as one chunk; the end comes after them at once", async () => {
    const { body } = fakeBody();
    const r = recorder();
    body.attach(r.consumer);
    // undici hands over a chunked body an HTTP chunk at a time, all of a socket read in one turn.
    body.push(Buffer.from("x"));
    body.push(Buffer.from("y"));
    expect(r.seen).toEqual([]);
    await afterRead();
    expect(r.seen).toEqual(["xy"]);
    body.push(Buffer.from("z"));
    body.complete();
    expect(r.seen).toEqual(["xy", "z", "<end>"]);
    await afterRead();
    expect(r.seen).toEqual(["xy", "z", "<end>"]);
  });

  it("pauses the upstream read while one turn brings 64 KiB before the consumer had them, and resumes it once they are taken", async () => {
    const { body, calls } = fakeBody();
    let bytes = 0;
    body.attach({ onChunk: (c) => (bytes += c.length), onEnd: () => {}, onError: () => {} });
    expect(body.push(Buffer.alloc(40 * 1024))).toBe(true);
    expect(body.push(Buffer.alloc(40 * 1024))).toBe(false);
    await afterRead();
    expect(bytes).toBe(80 * 1024);
    expect(calls.resumed).toBe(1);
  });

  it("pauses the upstream read while nobody reads and 64 KiB are held, and resumes it once they are taken", () => {
    const { body, calls } = fakeBody();
    expect(body.push(Buffer.alloc(40 * 1024))).toBe(true);
    expect(body.push(Buffer.alloc(40 * 1024))).toBe(false);
    let bytes = 0;
    body.attach({ onChunk: (c) => (bytes += c.length), onEnd: () => {}, onError: () => {} });
    expect(bytes).toBe(80 * 1024);
    expect(calls.resumed).toBe(1);
  });

  it("a consumer that pauses stops the deliveries and the upstream read until it resumes; the end waits behind held reads", async () => {
    const { body, calls } = fakeBody();
    const seen: string[] = [];
    body.attach({
      onChunk: (c) => {
        seen.push(c.toString());
        body.pause();
      },
      onEnd: () => seen.push("<end>"),
      onError: () => seen.push("<error>"),
    });
    expect(body.push(Buffer.from("1"))).toBe(true);
    await afterRead();
    expect(body.push(Buffer.from("2"))).toBe(false);
    body.complete();
    expect(seen).toEqual(["1"]);
    body.resume();
    expect(seen).toEqual(["1", "2"]);
    body.resume();
    expect(seen).toEqual(["1", "2", "<end>"]);
    expect(calls.resumed).toBe(0); // the upstream had ended: nothing to resume
  });

  it("an upstream error reaches the consumer after the reads before it", () => {
    const { body, calls } = fakeBody();
    body.push(Buffer.from("a"));
    body.fail(new Error("body timeout"));
    const r = recorder();
    body.attach(r.consumer);
    expect(r.seen).toEqual(["a", "<error body timeout>"]);
    expect(calls.finished).toBe(1);
    expect(calls.aborted).toEqual([]);
  });

  it("the caller's abort stops the call and reaches a paused consumer at once, held reads dropped", async () => {
    const { body, calls } = fakeBody();
    const r = recorder();
    body.attach({ ...r.consumer, onChunk: (c) => (r.consumer.onChunk(c), body.pause()) });
    body.push(Buffer.from("a"));
    await afterRead();
    body.push(Buffer.from("b"));
    const reason = new Error("client gone");
    body.abort(reason);
    expect(r.seen).toEqual(["a", "<error client gone>"]);
    expect(calls.aborted).toEqual([reason]);
    body.fail(new Error("aborted by undici")); // what undici reports back is ignored
    body.resume();
    expect(r.seen).toEqual(["a", "<error client gone>"]);
  });

  it("an abort before anyone reads is what a later reader gets", async () => {
    const { body } = fakeBody();
    const reason = new Error("client gone");
    body.abort(reason);
    await expect(body.text()).rejects.toBe(reason);
  });

  it("release: a body whose end is here is dropped without aborting; one still open aborts the call; the consumer hears nothing more", async () => {
    const done = fakeBody();
    const r1 = recorder();
    done.body.push(Buffer.from("a"));
    done.body.complete();
    done.body.attach({ ...r1.consumer, onChunk: (c) => (r1.consumer.onChunk(c), done.body.release()) });
    expect(r1.seen).toEqual(["a"]);
    expect(done.calls.aborted).toEqual([]);
    expect(done.calls.finished).toBe(1);

    const open = fakeBody();
    const r2 = recorder();
    open.body.attach(r2.consumer);
    open.body.push(Buffer.from("a"));
    await afterRead();
    open.body.release();
    await Promise.resolve(); // after the upstream read in progress
    open.body.fail(new Error("aborted"));
    expect(r2.seen).toEqual(["a"]);
    expect(open.calls.aborted).toHaveLength(1);
    expect(open.calls.finished).toBe(1);
  });

  it("release in a read whose end undici reports right after (same read): dropped, not aborted", async () => {
    const { body, calls } = fakeBody();
    body.attach({ onChunk: () => body.release(), onEnd: () => {}, onError: () => {} });
    body.push(Buffer.from("data: [DONE]\n\n"));
    body.complete();
    await Promise.resolve();
    expect(calls.aborted).toEqual([]);
    expect(calls.finished).toBe(1);
  });

  it("text() joins the reads as UTF-8, also a character split across reads", async () => {
    const { body } = fakeBody();
    const euro = Buffer.from("€");
    body.push(Buffer.concat([Buffer.from("x"), euro.subarray(0, 1)]));
    body.push(euro.subarray(1));
    body.complete();
    expect(await body.text()).toBe("x€");
  });

  it("dump() resolves at the end and on an error, and aborts a body over 128 KiB", async () => {
    const ok = fakeBody();
    ok.body.push(Buffer.from("a"));
    ok.body.complete();
    await ok.body.dump();
    const broken = fakeBody();
    broken.body.fail(new Error("x"));
    await broken.body.dump();
    const big = fakeBody();
    const dumped = big.body.dump();
    big.body.push(Buffer.alloc(100 * 1024));
    big.body.push(Buffer.alloc(100 * 1024));
    await dumped;
    expect(big.calls.aborted).toHaveLength(1);
  });

  it("async iteration reads every chunk then ends; stopping early releases the body", async () => {
    const { body, calls } = fakeBody();
    body.push(Buffer.from("a"));
    setTimeout(() => {
      body.push(Buffer.from("b"));
      body.complete();
    }, 1);
    const seen: string[] = [];
    for await (const c of body) seen.push(c.toString());
    expect(seen).toEqual(["a", "b"]);

    const open = fakeBody();
    open.body.push(Buffer.from("a"));
    for await (const c of open.body) {
      expect(c.toString()).toBe("a");
      break;
    }
    expect(open.calls.aborted).toHaveLength(1);
    expect(calls.aborted).toEqual([]);
  });

  it("runs the consumer in the async context it attached in, whatever context the upstream read comes in", async () => {
    const als = new AsyncLocalStorage<string>();
    const { body } = fakeBody();
    const seen: (string | undefined)[] = [];
    als.run("request-1", () => body.attach({ onChunk: () => seen.push(als.getStore()), onEnd: () => seen.push(als.getStore()), onError: () => {} }));
    als.run("socket-owner", () => body.push(Buffer.from("a")));
    await afterRead();
    als.run("socket-owner", () => body.complete());
    expect(seen).toEqual(["request-1", "request-1"]);
  });
});
