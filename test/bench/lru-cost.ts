/**
 * The memory store's bounded LRU under a steady stream of new keys (as its item index sees one
 * or two per stored response): µs per set, every 50,000 sets, through filling it (160,000
 * entries, the item index of a default 10,000-response store) and long after. Then its event
 * log (10,000 logs, a default store's) taking the first events of 400,000 new responses.
 *   npx tsx test/bench/lru-cost.ts
 */
import { MemoryEventLog } from "../../src/store/memory/events.js";
import { BoundedLru } from "../../src/store/memory/lru.js";

const lru = new BoundedLru({ maxEntries: 160_000, maxBytes: 32 * 1024 * 1024 });
let t = process.hrtime.bigint();
for (let i = 1; i <= 600_000; i++) {
  lru.set(`msg_${i.toString(16).padStart(48, "0")}`, `resp_${i}`, 3_600_000);
  if (i % 50_000 === 0) {
    const now = process.hrtime.bigint();
    console.log(`${i} sets: ${(Number(now - t) / 50_000 / 1000).toFixed(2)} µs per set, ${lru.size} entries`);
    t = now;
  }
}

const log = new MemoryEventLog({ maxEntries: 10_000, maxBytes: 256 * 1024 * 1024, ttlMs: 3_600_000 });
t = process.hrtime.bigint();
for (let i = 1; i <= 400_000; i++) {
  await log.append(`resp_${i}`, { type: "response.created", sequence_number: 0 } as never);
  if (i % 50_000 === 0) {
    const now = process.hrtime.bigint();
    console.log(`${i} logs: ${(Number(now - t) / 50_000 / 1000).toFixed(2)} µs per first append`);
    t = now;
  }
}
