import { createHash, timingSafeEqual } from "node:crypto";
import type { RouterConfig } from "../config/load.js";
import { ApiError } from "../ops/errors.js";
import type { KeyRing } from "../keys/key-ring.js";
import type { ApiKey } from "../keys/policy.js";

/**
 * Bearer auth against server.api_keys, then the keys made by the admin API. Config keys are
 * compared as SHA-256 digests with timingSafeEqual, and every configured key is checked, so
 * neither the length nor the position of a match leaks through timing. A made key is found by
 * the hex of the same digest in this instance's KeyRing (a map lookup: no store call); a token
 * neither knows makes the ring check the store's version once (a key just made on another
 * instance), which is the only case that returns a promise.
 * Returns the key's entry (its name owns what it creates), or null when the router runs
 * without keys (none in the config, none made). The entry is read from the config in force, so
 * a reload that removes a key rejects it from the next request on.
 */
export function authenticate(cfg: RouterConfig, header: string | undefined, made: KeyRing | null = null): ApiKey | null | Promise<ApiKey | null> {
  const keys = cfg.server.api_keys;
  if (keys.length === 0 && (made === null || made.size === 0)) return null;
  const token = header?.startsWith("Bearer ") ? header.slice(7).trim() : header?.startsWith("bearer ") ? header.slice(7).trim() : "";
  if (!token) {
    throw new ApiError(401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", {
      type: "invalid_request_error",
      code: "missing_api_key",
    });
  }
  const digest = sha(token);
  let owner: ApiKey | null = null;
  for (const k of keys) if (timingSafeEqual(digest, digestOf(k.key))) owner = k;
  if (owner !== null) return owner;
  if (made === null) throw incorrectKey();
  const hex = digest.toString("hex");
  return made.lookup(hex) ?? made.lookupFresh(hex).then((key) => key ?? Promise.reject(incorrectKey()));
}

const incorrectKey = () => new ApiError(401, "Incorrect API key provided.", { type: "invalid_request_error", code: "invalid_api_key" });

/** The hex SHA-256 a made key is stored under. */
export function secretDigest(secret: string): string {
  return sha(secret).toString("hex");
}

const sha = (s: string) => createHash("sha256").update(s).digest();
const digests = new Map<string, Buffer>();
function digestOf(key: string): Buffer {
  let d = digests.get(key);
  if (!d) {
    d = sha(key);
    if (digests.size > 1000) digests.clear();
    digests.set(key, d);
  }
  return d;
}
