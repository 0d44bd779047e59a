import { afterEach, describe, expect, it } from "vitest";
import { EventOrderError, jobAbortKind, type JobContext, type StoredResponse, type Stores } from "../../src/store/index.js";
import { describeChainContract } from "./chain-contract.js";
import { describeLimiterContract } from "./limiter-contract.js";
import { describeUsageContract } from "./usage-contract.js";
import { describeFilesContract } from "./files-contract.js";
import { describeKeysContract } from "./keys-contract.js";
import { aborted, collect, ev, makeRecord, makeResponse, newId, sleep, waitFor } from "./support.js";

export * from "./support.js";

export interface ContractOptions {
  ttlMs?: number;
}

/** Builds a fresh, empty set of stores (its own namespace in Redis). */
export type StoresFactory = (opts?: ContractOptions) => Promise<Stores>;

/**
 * The behaviour every store adapter must share. Run by test/store/memory.test.ts and
 * test/store/redis.test.ts; adapter-specific cases live in those files.
 */
export function describeStoreContract(name: string, factory: StoresFactory): void {
  describe(`store contract: ${name}`, () => {
    const opened: Stores[] = [];
    const open = async (opts?: ContractOptions) => {
      const s = await factory(opts);
      opened.push(s);
      return s;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    describe("responses", () => {
      it("saves, gets, replaces and deletes", async () => {
        const { responses } = await open();
        const id = newId();
        expect(await responses.get(id)).toBeNull();
        await responses.save(makeRecord(id, "first"));
        expect(await responses.get(id)).toEqual(makeRecord(id, "first"));
        await responses.save(makeRecord(id, "second"));
        expect((await responses.get(id))?.input[0].content).toBe("second");
        expect(await responses.delete(id)).toBe(true);
        expect(await responses.get(id)).toBeNull();
        expect(await responses.delete(id)).toBe(false);
        expect(await responses.ping()).toBe(true);
      });

      describe("saveIfOpen: the first final status wins", () => {
        const withStatus = (id: string, status: string, text = status) => {
          const rec = makeRecord(id, text);
          return { ...rec, response: { ...rec.response, status } } as StoredResponse;
        };

        it("is missing for a response never saved or deleted, and never creates one", async () => {
          const { responses } = await open();
          const id = newId();
          expect(await responses.saveIfOpen(withStatus(id, "in_progress"))).toBe("missing");
          expect(await responses.get(id)).toBeNull();
          await responses.save(withStatus(id, "queued"));
          await responses.delete(id);
          expect(await responses.saveIfOpen(withStatus(id, "completed"))).toBe("missing");
          expect(await responses.get(id)).toBeNull();
        });

        it("moves an open response through in_progress to a final status, indexing what it adds", async () => {
          const { responses } = await open();
          const id = newId();
          await responses.save(withStatus(id, "queued"));
          expect(await responses.saveIfOpen(withStatus(id, "in_progress"))).toBe("saved");
          expect((await responses.get(id))?.response.status).toBe("in_progress");
          const final = withStatus(id, "completed");
          final.response.output = [{ id: `rs_${id}`, type: "reasoning", summary: [], encrypted_content: "enc" }];
          expect(await responses.saveIfOpen(final)).toBe("saved");
          expect(await responses.get(id)).toEqual(final);
          expect((await responses.findItem(`rs_${id}`))?.item).toEqual(final.response.output[0]);
        });

        it.each(["completed", "failed", "cancelled", "incomplete"])("leaves a %s response as it is: a later final or open write learns it is finished", async (status) => {
          const { responses } = await open();
          const id = newId();
          await responses.save(withStatus(id, "in_progress"));
          const first = withStatus(id, status);
          expect(await responses.saveIfOpen(first)).toBe("saved");
          const late = withStatus(id, status === "completed" ? "failed" : "completed");
          late.response.output = [{ id: `msg_late_${id}`, type: "message", role: "assistant", status: "completed", content: [] }];
          expect(await responses.saveIfOpen(late)).toBe("finished");
          expect(await responses.saveIfOpen(withStatus(id, "in_progress"))).toBe("finished");
          expect(await responses.get(id)).toEqual(first);
          // The refused write indexed nothing.
          expect(await responses.findItem(`msg_late_${id}`)).toBeNull();
        });

        it("treats a response saved finished by save() as finished", async () => {
          const { responses } = await open();
          const id = newId();
          await responses.save(withStatus(id, "completed"));
          expect(await responses.saveIfOpen(withStatus(id, "failed"))).toBe("finished");
          expect((await responses.get(id))?.response.status).toBe("completed");
        });

        it("reads the response's own status wherever it sits: after nested statuses, escapes and lone surrogates", async () => {
          const { responses } = await open();
          const id = newId();
          // A response whose `status` comes last, after output items that carry statuses of their own
          // and text that looks like JSON; its input holds a lone surrogate (valid for JSON.stringify).
          const tricky = (status: string): StoredResponse => {
            const { status: _s, ...rest } = makeRecord(id).response;
            const output = [
              { id: `msg_${id}`, type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: 'say \\"status\\":\\"completed\\" and "status":"completed" \\ \ud800', annotations: [] }] },
              { id: `fc_${id}`, type: "function_call", status: "completed", call_id: "c1", name: "f", arguments: '{"status":"failed"}' },
            ];
            return { response: { ...rest, output, metadata: { status: "completed" }, status } as StoredResponse["response"], input: [{ id: `item_${id}`, type: "message", role: "user", content: "lone \udc00 surrogate \\u" }], owner: null };
          };
          await responses.save(tricky("in_progress"));
          expect(await responses.saveIfOpen(tricky("cancelled"))).toBe("saved");
          expect(await responses.saveIfOpen(tricky("completed"))).toBe("finished");
          expect(await responses.get(id)).toEqual(tricky("cancelled"));
        });

        it("lets exactly one of many concurrent final writes win", async () => {
          const { responses } = await open();
          const id = newId();
          await responses.save(withStatus(id, "in_progress"));
          const statuses = ["completed", "failed", "cancelled", "incomplete"];
          const writes = Array.from({ length: 20 }, (_, i) => withStatus(id, statuses[i % 4]!, `writer ${i}`));
          const results = await Promise.all(writes.map((w) => responses.saveIfOpen(w)));
          expect(results.filter((r) => r === "saved")).toHaveLength(1);
          expect(results.filter((r) => r === "finished")).toHaveLength(19);
          expect(await responses.get(id)).toEqual(writes[results.indexOf("saved")]);
        });
      });

      it("finds a stored response's items by id (input and output) until the response is deleted", async () => {
        const { responses } = await open();
        const id = newId();
        const rec = makeRecord(id, "question");
        await responses.save(rec);
        expect(await responses.findItem(`item_${id}`)).toEqual({ item: rec.input[0], owner: "team-a" });
        expect(await responses.findItem(`msg_${id}`)).toEqual({ item: rec.response.output[0], owner: "team-a" });
        expect(await responses.findItem("msg_never_saved")).toBeNull();

        // A later response carrying the same item (chained history) is where it is found next.
        const next = newId();
        const opened = makeRecord(next, "next");
        const chained = { ...opened, response: { ...opened.response, status: "in_progress" }, owner: null, input: [...rec.input, ...rec.response.output, opened.input[0]!] } as StoredResponse;
        await responses.save(chained);
        expect((await responses.findItem(`msg_${id}`))?.owner).toBeNull();
        // saveIfOpen indexes what it adds.
        const final = { ...chained, response: { ...chained.response, status: "completed", output: [{ id: "rs_late", type: "reasoning", summary: [], encrypted_content: "enc" }] } } as StoredResponse;
        expect(await responses.saveIfOpen(final)).toBe("saved");
        expect((await responses.findItem("rs_late"))?.item).toEqual(final.response.output[0]);

        await responses.delete(next);
        expect(await responses.findItem("rs_late")).toBeNull();
        expect(await responses.findItem(`item_${next}`)).toBeNull();
      });

      it("forgets indexed items with their response after the TTL", async () => {
        // A TTL a durable save on a loaded cluster (two replica waits) cannot outlast before the first look.
        const { responses } = await open({ ttlMs: 800 });
        const id = newId();
        await responses.save(makeRecord(id));
        expect(await responses.findItem(`item_${id}`)).not.toBeNull();
        await sleep(1_200);
        expect(await responses.findItem(`item_${id}`)).toBeNull();
      });

      it("answers null / false for ids it never saw", async () => {
        const { responses } = await open();
        expect(await responses.get("resp_missing")).toBeNull();
        expect(await responses.delete("resp_missing")).toBe(false);
      });

      it("forgets records after the TTL", async () => {
        // A TTL a durable save on a loaded cluster (two replica waits) cannot outlast before the first look.
        const { responses } = await open({ ttlMs: 800 });
        const id = newId();
        await responses.save(makeRecord(id));
        expect(await responses.get(id)).not.toBeNull();
        await sleep(1_200);
        expect(await responses.get(id)).toBeNull();
      });

      it("isolates stored state from the caller's objects", async () => {
        const { responses } = await open();
        const id = newId();
        const rec = makeRecord(id);
        await responses.save(rec);
        rec.response.status = "failed";
        rec.input.push({ type: "message" });
        const got = (await responses.get(id))!;
        expect(got).toEqual(makeRecord(id));
        got.response.output.length = 0;
        got.owner = "someone-else";
        expect(await responses.get(id)).toEqual(makeRecord(id));
      });

      it("keeps large records intact", async () => {
        const { responses } = await open();
        const id = newId();
        const big = "x".repeat(2 * 1024 * 1024) + "é✓🙂";
        const rec = makeRecord(id, big);
        rec.input.push(...Array.from({ length: 500 }, (_, i) => ({ id: `item_${i}`, type: "message", role: "user", content: `m${i}` })));
        await responses.save(rec);
        expect(await responses.get(id)).toEqual(rec);
      });
    });

    describe("chains", () => describeChainContract(open));

    describeLimiterContract(() => open());
    describeUsageContract(() => open());
    describeFilesContract(() => open());
    describeKeysContract(() => open());

    describe("conversations", () => {
      const conv = (id: string, owner: string | null = "team-a") => ({
        conversation: { id, object: "conversation" as const, created_at: 1_700_000_000, metadata: { topic: "demo" } },
        owner,
        endpoint: null,
      });
      const msg = (id: string, text = id) => ({ id, type: "message", role: "user", status: "completed", content: [{ type: "input_text", text }] });

      it("creates with items, gets, updates metadata and deletes", async () => {
        const { conversations } = await open();
        const id = `conv_${newId()}`;
        expect(await conversations.get(id)).toBeNull();
        expect(await conversations.items(id)).toBeNull();
        await conversations.create(conv(id), [msg("msg_1"), msg("msg_2")]);
        expect(await conversations.get(id)).toEqual(conv(id));
        expect((await conversations.items(id))!.map((i) => i.id)).toEqual(["msg_1", "msg_2"]);
        const updated = await conversations.update(id, { topic: "other" });
        expect(updated?.conversation.metadata).toEqual({ topic: "other" });
        expect((await conversations.get(id))?.conversation.metadata).toEqual({ topic: "other" });
        expect(await conversations.delete(id)).toBe(true);
        expect(await conversations.get(id)).toBeNull();
        expect(await conversations.items(id)).toBeNull();
        expect(await conversations.delete(id)).toBe(false);
        expect(await conversations.update(id, {})).toBeNull();
      });

      it("a conversation without items exists and lists none", async () => {
        const { conversations } = await open();
        const id = `conv_${newId()}`;
        await conversations.create(conv(id, null), []);
        expect(await conversations.items(id)).toEqual([]);
        expect((await conversations.get(id))?.owner).toBeNull();
      });

      it("appends in order, records the serving endpoint, and refuses a missing conversation", async () => {
        const { conversations } = await open();
        const id = `conv_${newId()}`;
        await conversations.create(conv(id), [msg("msg_0")]);
        expect(await conversations.append(id, [msg("msg_1"), msg("msg_2")], "box-a")).toBe(true);
        expect((await conversations.get(id))?.endpoint).toBe("box-a");
        expect(await conversations.append(id, [msg("msg_3")])).toBe(true);
        expect((await conversations.get(id))?.endpoint).toBe("box-a"); // kept when not given
        expect((await conversations.items(id))!.map((i) => i.id)).toEqual(["msg_0", "msg_1", "msg_2", "msg_3"]);
        expect(await conversations.append("conv_missing", [msg("msg_x")], "box-a")).toBe(false);
        expect(await conversations.get("conv_missing")).toBeNull();
        await conversations.delete(id);
        expect(await conversations.append(id, [msg("msg_4")])).toBe(false);
        expect(await conversations.items(id)).toBeNull();
      });

      it("concurrent appends never lose or interleave a turn", async () => {
        const { conversations } = await open();
        const id = `conv_${newId()}`;
        await conversations.create(conv(id), []);
        const turns = Array.from({ length: 20 }, (_, t) => [msg(`msg_${t}_a`), msg(`msg_${t}_b`), msg(`msg_${t}_c`)]);
        await Promise.all(turns.map((items) => conversations.append(id, items, "ep")));
        const ids = (await conversations.items(id))!.map((i) => i.id!);
        expect(ids).toHaveLength(60);
        for (let i = 0; i < 60; i += 3) {
          const turn = ids[i]!.slice(0, -2);
          expect(ids.slice(i, i + 3)).toEqual([`${turn}_a`, `${turn}_b`, `${turn}_c`]);
        }
      });

      it("finds items by id alone, with the conversation's owner, until they or the conversation are deleted", async () => {
        const { conversations } = await open();
        const id = `conv_${newId()}`;
        const other = `conv_${newId()}`;
        await conversations.create(conv(id), [msg("msg_c1")]);
        await conversations.create(conv(other, null), []);
        expect(await conversations.findItem("msg_c1")).toEqual({ item: msg("msg_c1"), owner: "team-a" });
        expect(await conversations.findItem("msg_nowhere")).toBeNull();
        await conversations.append(other, [msg("msg_c2"), { type: "message", role: "user", content: "no id" } as any], "ep");
        expect(await conversations.findItem("msg_c2")).toEqual({ item: msg("msg_c2"), owner: null });
        expect(await conversations.deleteItem(other, "msg_c2")).toBe(true);
        expect(await conversations.findItem("msg_c2")).toBeNull();
        await conversations.delete(id);
        expect(await conversations.findItem("msg_c1")).toBeNull();
      });

      it("deletes one item by id", async () => {
        const { conversations } = await open();
        const id = `conv_${newId()}`;
        await conversations.create(conv(id), [msg("msg_1"), msg("msg_2", "same text"), msg("msg_3", "same text")]);
        expect(await conversations.deleteItem(id, "msg_2")).toBe(true);
        expect(await conversations.deleteItem(id, "msg_2")).toBe(false);
        expect(await conversations.deleteItem("conv_missing", "msg_1")).toBe(false);
        expect((await conversations.items(id))!.map((i) => i.id)).toEqual(["msg_1", "msg_3"]);
      });

      it("forgets conversations after the TTL", async () => {
        const { conversations } = await open({ ttlMs: 800 });
        const id = `conv_${newId()}`;
        await conversations.create(conv(id), [msg("msg_1")]);
        expect(await conversations.get(id)).not.toBeNull();
        await sleep(1_200);
        expect(await conversations.get(id)).toBeNull();
        expect(await conversations.items(id)).toBeNull();
      });

      it("isolates stored state from the caller's objects", async () => {
        const { conversations } = await open();
        const id = `conv_${newId()}`;
        const rec = conv(id);
        const items = [msg("msg_1")];
        await conversations.create(rec, items);
        rec.conversation.metadata.topic = "changed";
        items.push(msg("msg_2"));
        const got = (await conversations.items(id))!;
        got.push(msg("msg_3"));
        expect((await conversations.get(id))?.conversation.metadata).toEqual({ topic: "demo" });
        expect(await conversations.items(id)).toHaveLength(1);
      });
    });

    describe("cache", () => {
      it("gets what was set, misses otherwise, expires per entry", async () => {
        const { cache } = await open();
        expect(await cache.get("k-missing")).toBeNull();
        // 300 ms or more either side of the expiry: a loaded machine (a cluster's set and get) must not cross it before the first look.
        await cache.set("k-short", { response: makeResponse("resp_a") }, 400);
        await cache.set("k-long", { response: makeResponse("resp_b") }, 10_000);
        expect((await cache.get("k-short"))?.response.id).toBe("resp_a");
        await sleep(800);
        expect(await cache.get("k-short")).toBeNull();
        expect((await cache.get("k-long"))?.response.id).toBe("resp_b");
      });

      it("isolates cached values", async () => {
        const { cache } = await open();
        const value = { response: makeResponse("resp_c") };
        await cache.set("k", value, 10_000);
        value.response.model = "mutated";
        const got = (await cache.get("k"))!;
        got.response.output.length = 0;
        expect(await cache.get("k")).toEqual({ response: makeResponse("resp_c") });
      });
    });

    describe("event log", () => {
      it("appends and reads after a sequence number", async () => {
        const { events } = await open();
        const id = newId();
        for (let i = 0; i < 5; i++) await events.append(id, ev(i));
        expect((await events.read(id, -1)).map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4]);
        expect(await events.read(id, 2)).toEqual([ev(3), ev(4)]);
        expect(await events.read(id, 4)).toEqual([]);
        expect(await events.read("resp_nothing", -1)).toEqual([]);
        await events.delete(id);
        expect(await events.read(id, -1)).toEqual([]);
      });

      it("appendIfExists appends to a log that exists and never re-creates a deleted one", async () => {
        const { events } = await open();
        const id = newId();
        expect(await events.appendIfExists(id, ev(0))).toBe(false);
        expect(await events.read(id, -1)).toEqual([]);
        await events.append(id, ev(0));
        expect(await events.appendIfExists(id, ev(1))).toBe(true);
        await expect(events.appendIfExists(id, ev(1))).rejects.toBeInstanceOf(EventOrderError);
        expect((await events.read(id, -1)).map((e) => e.sequence_number)).toEqual([0, 1]);
        await events.delete(id);
        expect(await events.appendIfExists(id, ev(2, "response.completed"))).toBe(false);
        expect(await events.read(id, -1)).toEqual([]);
      });

      it("rejects events that are not after the last one", async () => {
        const { events } = await open();
        const id = newId();
        await events.append(id, ev(0));
        await events.append(id, ev(1));
        await expect(events.append(id, ev(1))).rejects.toBeInstanceOf(EventOrderError);
        await expect(events.append(id, ev(0))).rejects.toBeInstanceOf(EventOrderError);
        await events.append(id, ev(5));
        expect((await events.read(id, -1)).map((e) => e.sequence_number)).toEqual([0, 1, 5]);
      });

      it("follow replays recorded events and stops at the terminal one", async () => {
        const { events } = await open();
        const id = newId();
        await events.append(id, ev(0, "response.created"));
        await events.append(id, ev(1));
        await events.append(id, ev(2, "response.completed", { response: { id, status: "completed" } }));
        const ac = new AbortController();
        expect((await collect(events.follow(id, -1, ac.signal))).map((e) => e.type)).toEqual(["response.created", "response.output_text.delta", "response.completed"]);
        expect((await collect(events.follow(id, 1, ac.signal))).map((e) => e.sequence_number)).toEqual([2]);
      });

      it("a follower that starts before any event sees them live and ends at the terminal event", async () => {
        const { events } = await open();
        const id = newId();
        const ac = new AbortController();
        const seen = collect(events.follow(id, -1, ac.signal));
        await sleep(100);
        await events.append(id, ev(0, "response.created"));
        for (let i = 1; i <= 20; i++) {
          await events.append(id, ev(i));
          if (i % 5 === 0) await sleep(10);
        }
        await events.append(id, ev(21, "response.failed", { response: { id, status: "failed" } }));
        await events.append(id, ev(22)); // after the end: never delivered
        const got = await seen;
        expect(got.map((e) => e.sequence_number)).toEqual(Array.from({ length: 22 }, (_, i) => i));
        expect(got.at(-1)?.type).toBe("response.failed");
      });

      it("a resumed follower gets recorded then live events without gaps or duplicates", async () => {
        const { events } = await open();
        const id = newId();
        for (let i = 0; i < 4; i++) await events.append(id, ev(i));
        const ac = new AbortController();
        const seen = collect(events.follow(id, 1, ac.signal));
        for (let i = 4; i < 8; i++) await events.append(id, ev(i));
        await events.append(id, ev(8, "response.completed", { response: { id, status: "completed" } }));
        expect((await seen).map((e) => e.sequence_number)).toEqual([2, 3, 4, 5, 6, 7, 8]);
      });

      it("a lifecycle event whose response is cancelled ends the stream", async () => {
        const { events } = await open();
        const id = newId();
        await events.append(id, ev(0, "response.created", { response: { id, status: "queued" } }));
        await events.append(id, ev(1, "response.in_progress", { response: { id, status: "cancelled" } }));
        const ac = new AbortController();
        expect((await collect(events.follow(id, -1, ac.signal))).length).toBe(2);
      });

      it("follow returns when its signal aborts", async () => {
        const { events } = await open();
        const id = newId();
        await events.append(id, ev(0));
        const ac = new AbortController();
        const seen: number[] = [];
        let abortedAt = 0;
        // Aborted once the follower has the first event and waits for more (a new blocking
        // connection on a loaded cluster can take longer than a fixed delay to read at all).
        for await (const e of events.follow(id, -1, ac.signal)) {
          seen.push(e.sequence_number);
          setTimeout(() => ((abortedAt = Date.now()), ac.abort()), 100);
        }
        expect(seen).toEqual([0]);
        expect(Date.now() - abortedAt).toBeLessThan(1_500);
      });
    });

    describe("job queue", () => {
      it("runs queued jobs with their payload, never more than `concurrency` at once", async () => {
        const { jobs } = await open();
        let active = 0;
        let peak = 0;
        const done: JobContext[] = [];
        const ids = Array.from({ length: 6 }, () => newId());
        for (const id of ids) await jobs.enqueue({ responseId: id, payload: { n: id, nested: [1, 2] } });
        jobs.start(async (job) => {
          active++;
          peak = Math.max(peak, active);
          await sleep(80);
          active--;
          done.push(job);
        }, 2);
        await waitFor(() => done.length === 6, 10_000, "all jobs");
        expect(peak).toBe(2);
        expect(done.map((j) => j.responseId).sort()).toEqual([...ids].sort());
        for (const j of done) {
          expect(j.payload).toEqual({ n: j.responseId, nested: [1, 2] });
          expect(j).toMatchObject({ attempt: 1, redelivered: false });
        }
      });

      it("ignores a second enqueue of a job that is still queued or running", async () => {
        const { jobs } = await open();
        const id = newId();
        let runs = 0;
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        jobs.start(async () => {
          runs++;
          await gate;
        }, 2);
        await jobs.enqueue({ responseId: id, payload: null });
        await waitFor(() => runs === 1, 5_000, "first run");
        await jobs.enqueue({ responseId: id, payload: null });
        await sleep(200);
        release();
        await sleep(100);
        expect(runs).toBe(1);
      });

      it("cancel aborts a running job's signal", async () => {
        const { jobs } = await open();
        const id = newId();
        let signalSeen: AbortSignal | null = null;
        let finished = false;
        jobs.start(async (_job, signal) => {
          signalSeen = signal;
          await aborted(signal);
          finished = true;
        }, 1);
        await jobs.enqueue({ responseId: id, payload: null });
        await waitFor(() => signalSeen !== null, 5_000, "job start");
        await jobs.cancel(id);
        await waitFor(() => finished, 2_000, "abort");
        expect(jobAbortKind(signalSeen!)).toBe("cancelled");
      });

      it("cancel of a queued job means it never runs", async () => {
        const { jobs } = await open();
        const [a, b, c] = [newId(), newId(), newId()];
        const ran: string[] = [];
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        jobs.start(async (job) => {
          ran.push(job.responseId);
          if (job.responseId === a) await gate;
        }, 1);
        await jobs.enqueue({ responseId: a, payload: null });
        await waitFor(() => ran.length === 1, 5_000, "job a");
        await jobs.enqueue({ responseId: b, payload: null });
        await jobs.enqueue({ responseId: c, payload: null });
        await jobs.cancel(b);
        release();
        await waitFor(() => ran.includes(c), 5_000, "job c");
        await sleep(100);
        expect(ran).toEqual([a, c]);
      });

      it("waitingCount counts jobs not started yet", async () => {
        const { jobs } = await open();
        const [a, b, c] = [newId(), newId(), newId()];
        expect(await jobs.waitingCount()).toBe(0);
        const ran: string[] = [];
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        jobs.start(async (job) => {
          ran.push(job.responseId);
          await gate;
        }, 1);
        await jobs.enqueue({ responseId: a, payload: null });
        await waitFor(() => ran.length === 1, 5_000, "job a");
        await jobs.enqueue({ responseId: b, payload: null });
        await jobs.enqueue({ responseId: c, payload: null });
        expect(await jobs.waitingCount()).toBe(2);
        release();
        await waitFor(() => ran.length === 3, 5_000, "jobs b and c");
        expect(await jobs.waitingCount()).toBe(0);
      });

      it("a job cancelled before it is enqueued is skipped", async () => {
        const { jobs } = await open();
        const [a, b] = [newId(), newId()];
        const ran: string[] = [];
        await jobs.cancel(a);
        jobs.start(async (job) => void ran.push(job.responseId), 1);
        await jobs.enqueue({ responseId: a, payload: null });
        await jobs.enqueue({ responseId: b, payload: null });
        await waitFor(() => ran.includes(b), 5_000, "job b");
        expect(ran).toEqual([b]);
      });
    });
  });
}
