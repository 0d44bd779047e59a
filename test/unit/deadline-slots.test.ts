import { describe, expect, it } from "vitest";
import { Slots } from "../../src/ops/slots.js";
import { Deadline, ShutdownDeadline } from "../../src/runtime/deadline.js";

describe("Slots", () => {
  it("holds items until removed, reuses freed slots and counts what it holds", () => {
    const s = new Slots<string>();
    const a = s.add("a");
    const b = s.add("b");
    const c = s.add("c");
    expect(s.size).toBe(3);
    s.remove(b);
    expect(s.size).toBe(2);
    const seen: string[] = [];
    s.forEach((x) => seen.push(x));
    expect(seen).toEqual(["a", "c"]);
    // The freed slot is taken again: the array does not grow with every request.
    expect(s.add("d")).toBe(b);
    s.remove(a);
    s.remove(c);
    seen.length = 0;
    s.forEach((x) => seen.push(x));
    expect(seen).toEqual(["d"]);
    expect(s.size).toBe(1);
  });

  it("ignores a second remove of a slot nobody took again", () => {
    const s = new Slots<number>();
    const a = s.add(1);
    s.remove(a);
    s.remove(a);
    expect(s.size).toBe(0);
    // Had the slot gone onto the free list twice, these two would share it.
    const x = s.add(2);
    const y = s.add(3);
    expect(x).not.toBe(y);
    expect(s.size).toBe(2);
  });

  it("lets the callback of forEach remove items, its own and later ones", () => {
    const s = new Slots<string>();
    const slots: Record<string, number> = {};
    for (const k of ["a", "b", "c"]) slots[k] = s.add(k);
    const seen: string[] = [];
    s.forEach((x) => {
      seen.push(x);
      s.remove(slots[x]!);
      if (x === "a") s.remove(slots.c!);
    });
    expect(seen).toEqual(["a", "b"]);
    expect(s.size).toBe(0);
  });
});

describe("Deadline", () => {
  const fail = (err: unknown) => {
    throw err;
  };

  it("runs each callback still listening once when it passes, with the reason set first", () => {
    const d = new Deadline();
    const calls: string[] = [];
    const a = d.listen(() => calls.push(`a:${d.reason !== null}`));
    const b = d.listen(() => calls.push("b"));
    d.listen(() => {
      calls.push("c");
      // A callback that lets go of another one while the deadline passes.
      d.forget(a);
    });
    d.forget(b);
    expect(d.reason).toBeNull();
    d.pass(fail);
    d.pass(fail);
    expect(calls).toEqual(["a:true", "c"]);
    expect(d.reason).toBeInstanceOf(ShutdownDeadline);
    expect(d.reason!.code).toBe("server_shutting_down");
  });

  it("runs every callback even when one throws, and reports that one's error", () => {
    const d = new Deadline();
    const calls: string[] = [];
    const errors: unknown[] = [];
    d.listen(() => calls.push("a"));
    d.listen(() => {
      throw new Error("one stream failed to end");
    });
    d.listen(() => calls.push("c"));
    d.pass((err) => errors.push(err));
    expect(calls).toEqual(["a", "c"]);
    expect(errors.map((e) => (e as Error).message)).toEqual(["one stream failed to end"]);
  });

  it("calls a listener that comes after the deadline at once, with nothing to forget", () => {
    const d = new Deadline();
    d.pass(fail);
    let called = 0;
    const slot = d.listen(() => called++);
    expect(called).toBe(1);
    d.forget(slot);
    expect(called).toBe(1);
  });
});
