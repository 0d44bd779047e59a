import type { CachedResponse, StoredResponse } from "./types.js";

/**
 * A stored record or cache entry as JSON, the same bytes `JSON.stringify` makes when its
 * `response` is the first key (as every caller builds it), reusing the response's JSON when
 * the caller already made it: a response is serialised once per request, not once for the
 * client, once for the store and once for the cache.
 */
export function recordJson(record: StoredResponse | CachedResponse, responseJson?: string): string {
  if (responseJson === undefined) return JSON.stringify(record);
  const { response: _response, ...rest } = record;
  const tail = JSON.stringify(rest);
  return tail === "{}" ? `{"response":${responseJson}}` : `{"response":${responseJson},${tail.slice(1)}`;
}
