/**
 * What the routes answer, derived from the stored records: a vector store's `status`,
 * `file_counts` and `usage_bytes` from its files, a batch's from the files it attached, list
 * pages as OpenAI lays them out (`limit`, `order`, `after`, `before`), expiry. Pure.
 */
import { randomBytes } from "node:crypto";
import { invalidRequest } from "../ops/errors.js";
import type { FileCountsRecord, StoredFileBatch, StoredVectorStore, StoredVectorStoreFile, VectorStoreFileRecord, VectorStoreRecord } from "../store/files.js";

/**
 * OpenAI-looking ids: `file-…`, `vs_…`, `vsfb_…`, then 32 lowercase hex digits. OpenAI's own
 * file ids are 22 or 24 base62 characters after `file-`, so the form alone tells the router's
 * ids from OpenAI's (`isRouterFileId`).
 */
export function newId(prefix: "file-" | "vs_" | "vsfb_"): string {
  return prefix + randomBytes(16).toString("hex");
}

const ROUTER_FILE_ID = /^file-[0-9a-f]{32}$/;

/** An id of the form `newId("file-")` makes: one of the router's files, live or not, whoever's. */
export function isRouterFileId(id: string): boolean {
  return ROUTER_FILE_ID.test(id);
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function fileCounts(files: Array<Pick<VectorStoreFileRecord, "status">>): FileCountsRecord {
  const counts: FileCountsRecord = { in_progress: 0, completed: 0, failed: 0, cancelled: 0, total: files.length };
  for (const f of files) counts[f.status]++;
  return counts;
}

export interface VectorStoreView extends VectorStoreRecord {
  status: "expired" | "in_progress" | "completed";
  usage_bytes: number;
  file_counts: FileCountsRecord;
}

/** The clock the Files room reads (unix seconds): `nowSeconds`, or a test's. */
export type Clock = () => number;

export function expired(expiresAt: number | null | undefined, now: number): boolean {
  return typeof expiresAt === "number" && expiresAt <= now;
}

export function vectorStoreView(rec: StoredVectorStore, files: StoredVectorStoreFile[], now: number): VectorStoreView {
  const counts = fileCounts(files.map((f) => f.file));
  const status = expired(rec.store.expires_at, now) ? "expired" : counts.in_progress > 0 ? "in_progress" : "completed";
  const usage = files.reduce((sum, f) => sum + f.file.usage_bytes, 0);
  return { ...rec.store, status, usage_bytes: usage, file_counts: counts };
}

/** A batch as OpenAI's `VectorStoreFileBatch`: counts over the files it attached (still attached). */
export function batchView(rec: StoredFileBatch, files: StoredVectorStoreFile[]) {
  const mine = files.filter((f) => f.batch_id === rec.batch.id);
  const counts = fileCounts(mine.map((f) => f.file));
  // Files detached since count as done: the batch's total stays what it attached.
  counts.total = Math.max(counts.total, rec.file_ids.length);
  const status = rec.batch.cancelled ? "cancelled" : counts.in_progress > 0 ? "in_progress" : counts.failed > 0 && counts.completed === 0 ? "failed" : "completed";
  const { cancelled: _cancelled, ...batch } = rec.batch;
  return { ...batch, status, file_counts: counts };
}

/** `expires_after` of a vector store: `{anchor: "last_active_at", days: 1..365}`. */
export function readStoreExpiry(raw: unknown): VectorStoreRecord["expires_after"] {
  if (raw === undefined || raw === null) return null;
  const e = raw as { anchor?: unknown; days?: unknown };
  if (e.anchor !== "last_active_at") throw invalidRequest("Invalid 'expires_after.anchor': expected 'last_active_at'.", "expires_after.anchor", "invalid_value");
  if (typeof e.days !== "number" || !Number.isInteger(e.days) || e.days < 1 || e.days > 365) throw invalidRequest("Invalid 'expires_after.days': expected an integer from 1 to 365.", "expires_after.days", "invalid_value");
  return { anchor: "last_active_at", days: e.days };
}

export function storeExpiresAt(expiry: VectorStoreRecord["expires_after"], lastActive: number): number | null {
  return expiry ? lastActive + expiry.days * 86_400 : null;
}

/** `metadata`: at most 16 string pairs, keys up to 64 characters, values up to 512. */
export function readMetadata(raw: unknown): Record<string, string> | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "object" || Array.isArray(raw)) throw invalidRequest("Invalid 'metadata': expected an object.", "metadata", "invalid_type");
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > 16) throw invalidRequest("Invalid 'metadata': at most 16 pairs.", "metadata", "invalid_value");
  for (const [k, v] of entries) {
    if (k.length > 64 || typeof v !== "string" || v.length > 512) throw invalidRequest("Invalid 'metadata': keys up to 64 characters, values strings up to 512.", "metadata", "invalid_value");
  }
  return raw as Record<string, string>;
}

/** `attributes`: at most 16 pairs of strings (up to 512 characters), numbers and booleans. */
export function readAttributes(raw: unknown, param = "attributes"): Record<string, string | number | boolean> | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "object" || Array.isArray(raw)) throw invalidRequest(`Invalid '${param}': expected an object.`, param, "invalid_type");
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > 16) throw invalidRequest(`Invalid '${param}': at most 16 pairs.`, param, "invalid_value");
  for (const [k, v] of entries) {
    const ok = (typeof v === "string" && v.length <= 512) || (typeof v === "number" && Number.isFinite(v)) || typeof v === "boolean";
    if (k.length > 64 || !ok) throw invalidRequest(`Invalid '${param}.${k}': expected a string (up to 512 characters), a number or a boolean.`, `${param}.${k}`, "invalid_value");
  }
  return raw as Record<string, string | number | boolean>;
}

export interface ListQuery {
  limit?: string;
  order?: string;
  after?: string;
  before?: string;
}

/** One page of a list, OpenAI's cursor layout: newest first unless `order=asc`. */
export function page<T extends { id: string; created_at: number }>(items: T[], q: ListQuery, maxLimit = 100, defaultLimit = 20) {
  const limit = q.limit === undefined ? defaultLimit : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) throw invalidRequest(`Invalid 'limit': expected an integer from 1 to ${maxLimit}.`, "limit", "invalid_value");
  if (q.order !== undefined && q.order !== "asc" && q.order !== "desc") throw invalidRequest("Invalid 'order': expected 'asc' or 'desc'.", "order", "invalid_value");
  const sign = q.order === "asc" ? 1 : -1;
  const sorted = [...items].sort((a, b) => sign * (a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  let from = 0;
  let to = sorted.length;
  if (q.after) {
    const at = sorted.findIndex((i) => i.id === q.after);
    if (at >= 0) from = at + 1;
  }
  if (q.before) {
    const at = sorted.findIndex((i) => i.id === q.before);
    if (at >= 0) to = at;
  }
  const window = q.before && !q.after ? sorted.slice(Math.max(from, to - limit), to) : sorted.slice(from, Math.min(to, from + limit));
  const hasMore = q.before && !q.after ? to - limit > from : from + limit < to;
  return { object: "list" as const, data: window, first_id: window[0]?.id ?? null, last_id: window.at(-1)?.id ?? null, has_more: hasMore };
}
