import { describe, expect, it } from "vitest";
import { sseBody, textBody, webStream, type StreamBody, type TextSink } from "../../src/wire/sse-writer.js";

const decoder = new TextDecoder();
const readAll = async (stream: ReadableStream<Uint8Array>) => {
  let text = "";
  for await (const chunk of stream) text += decoder.decode(chunk);
  return text;
};

/** The web-stream form of a body (app.request, no Node response): what the Node path writes, as bytes. */
describe("webStream", () => {
  it("carries a text body and an event body's batches, then ends", async () => {
    expect(await readAll(webStream(textBody("data: a\n\ndata: [DONE]\n\n")))).toBe("data: a\n\ndata: [DONE]\n\n");
    const body = sseBody(async (sink) => {
      sink.send("response.created", '{"a":1}');
      sink.send("response.output_text.delta", '{"b":\n2}'); // a data field over two lines stays two data lines
      sink.flush!();
      sink.send("response.completed", "{}");
    }, () => {});
    expect(await readAll(webStream(body))).toBe('event: response.created\ndata: {"a":1}\n\nevent: response.output_text.delta\ndata: {"b":\ndata: 2}\n\nevent: response.completed\ndata: {}\n\n');
  });

  it("bytes passed as they came keep their place among the events, written at the flush", async () => {
    const writes: (string | Uint8Array)[] = [];
    const bytes = (text: string) => new TextEncoder().encode(text);
    await new Promise<void>((resolve) => {
      sseBody(async (sink) => {
        sink.sendRaw!(bytes("event: a\ndata: 1\n\n"), 1); // alone
        expect(writes).toEqual([]); // held until the flush
        sink.flush!();
        sink.send("b", "2");
        sink.sendRaw!(bytes("event: c\ndata: 3\n\n"), 3); // after text
        sink.sendRaw!(bytes("event: d\ndata: 4\n\n"), 4);
        sink.send("e", "5");
        sink.flush!();
        sink.sendRaw!(bytes("event: f\ndata: 6\n\n"), 6);
        sink.send("g", "7"); // text after bytes held alone
        sink.sendRaw!(bytes("event: h\ndata: 8\n\n"), 8);
      }, () => {}).start({ write: (t) => (writes.push(t), true), ready: () => Promise.resolve(), end: resolve });
    });
    const text = writes.map((w) => (typeof w === "string" ? w : decoder.decode(w))).join("");
    expect(text).toBe(["a", "b", "c", "d", "e", "f", "g", "h"].map((t, i) => `event: ${t}\ndata: ${i + 1}\n\n`).join(""));
    expect(writes[0]).toBeInstanceOf(Uint8Array); // the bytes themselves, never decoded
  });

  it("says when the client is full (a flush's write returned false) and when it has drained", async () => {
    let room = true;
    let drain: () => void = () => {};
    const seen: (string | null)[] = [];
    await new Promise<void>((resolve) => {
      sseBody(async (sink) => {
        sink.send("a", "1");
        sink.flush!();
        seen.push(sink.backlog!() === null ? null : "full"); // the write was taken
        room = false;
        sink.send("b", "2");
        expect(sink.backlog!()).toBeNull(); // nothing is full before the flush writes
        sink.flush!();
        const drained = sink.backlog!();
        seen.push(drained === null ? null : "full");
        let done = false;
        void drained!.then(() => (done = true));
        await Promise.resolve();
        seen.push(done ? "drained" : "waiting");
        room = true;
        drain();
        await drained;
        seen.push(sink.backlog!() === null ? null : "full");
      }, () => {}).start({
        write: () => room,
        ready: () => new Promise<void>((r) => (drain = r)),
        end: resolve,
      });
    });
    expect(seen).toEqual([null, "full", "waiting", null]);
  });

  it("is pulled: a writer told the stream is full waits until the reader asks for more", async () => {
    const log: string[] = [];
    const body: StreamBody = {
      start(sink: TextSink) {
        void (async () => {
          for (const part of ["one", "two", "three"]) {
            log.push(`write ${part}`);
            if (!sink.write(part)) await sink.ready();
          }
          sink.end();
        })();
        return () => {};
      },
    };
    const reader = webStream(body).getReader();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(log).toEqual(["write one"]); // nobody read yet: the writer waits
    expect(decoder.decode((await reader.read()).value)).toBe("one");
    expect(decoder.decode((await reader.read()).value)).toBe("two");
    expect(decoder.decode((await reader.read()).value)).toBe("three");
    expect((await reader.read()).done).toBe(true);
    expect(log).toEqual(["write one", "write two", "write three"]);
  });

  it("cancelling the stream is the client going away: the body's cancel runs and later writes are dropped", async () => {
    let cancelled = 0;
    let sink!: TextSink;
    const stream = webStream({
      start(s) {
        sink = s;
        s.write("first");
        return () => cancelled++;
      },
    });
    const reader = stream.getReader();
    expect(decoder.decode((await reader.read()).value)).toBe("first");
    await reader.cancel();
    expect(cancelled).toBe(1);
    expect(sink.write("late")).toBe(true);
    await sink.ready(); // resolves at once: nobody is waiting for more
    sink.end();
  });
});
