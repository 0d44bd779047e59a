import { describe, expect, it } from "vitest";
import { EventRecorder } from "../../src/responses/background/events.js";
import { MemoryEventLog } from "../../src/store/memory/events.js";
import { StoreUnavailableError } from "../../src/store/types.js";
import type { StreamEvent } from "../../src/wire/types.js";

/** A memory event log whose appends fail while `down` is true. */
class FlakyLog extends MemoryEventLog {
  down = false;
  override async appendIfExists(id: string, event: StreamEvent): Promise<boolean> {
    if (this.down) throw new StoreUnavailableError("events.append: connection refused");
    return super.appendIfExists(id, event);
  }
}
const newLog = () => new FlakyLog({ maxEntries: 100, maxBytes: 1 << 20, ttlMs: 60_000 });
const send = (r: EventRecorder, seq: number) => r.send("response.output_text.delta", JSON.stringify({ type: "response.output_text.delta", delta: `d${seq}`, sequence_number: seq }));

describe("EventRecorder", () => {
  it("holds events in order while the store is away and records them all when it is back: no gap", async () => {
    const log = newLog();
    await log.append("resp_1", { type: "response.created", sequence_number: 0 });
    const r = new EventRecorder(log, "resp_1", () => {}, 10_000);
    send(r, 1);
    await r.drained();
    log.down = true;
    for (let seq = 2; seq <= 6; seq++) send(r, seq);
    await new Promise((resolve) => setTimeout(resolve, 300));
    log.down = false;
    send(r, 7);
    await r.drained();
    expect(r.broken).toBeNull();
    expect((await log.read("resp_1", -1)).map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(r.nextSequence).toBe(8);
  });

  it("gives up after its retry window: recording stops at the first lost event and the job ends right after the last recorded one", async () => {
    const log = newLog();
    await log.append("resp_2", { type: "response.created", sequence_number: 0 });
    let errors = 0;
    const r = new EventRecorder(log, "resp_2", () => errors++, 200);
    send(r, 1);
    send(r, 2);
    await r.drained();
    log.down = true;
    for (let seq = 3; seq <= 9; seq++) send(r, seq);
    await r.drained();
    log.down = false;
    expect(r.broken).toBeInstanceOf(StoreUnavailableError);
    expect(errors).toBeGreaterThan(0);
    expect(r.nextSequence).toBe(3);
    expect((await log.read("resp_2", -1)).map((e) => e.sequence_number)).toEqual([0, 1, 2]);
  });

  it("never re-creates a deleted log", async () => {
    const log = newLog();
    await log.append("resp_3", { type: "response.created", sequence_number: 0 });
    const r = new EventRecorder(log, "resp_3", () => {});
    send(r, 1);
    await r.drained();
    await log.delete("resp_3");
    send(r, 2);
    send(r, 3);
    await r.drained();
    expect(r.gone).toBe(true);
    expect(await log.read("resp_3", -1)).toEqual([]);
  });
});
