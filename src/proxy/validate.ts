import { invalidRequest } from "../ops/errors.js";
import type { ProxyRequest } from "./forward.js";

/** A proxied body checked just enough to route it; the backend validates the rest. */
export interface CheckedRequest extends ProxyRequest {
  stream: boolean;
  /** The `router.cache` extension, when the request set it. */
  cache: boolean | undefined;
}

/**
 * POST /v1/chat/completions: a JSON object with a string `model` and a non-empty
 * `messages` array. Everything else (tools, response_format, n, seed, ...) is the
 * backend's to accept or refuse, so its own 4xx reaches the client unchanged.
 */
export function checkChatRequest(raw: unknown): CheckedRequest {
  const { body, cache } = common(raw);
  if (body.messages === undefined || body.messages === null) {
    throw invalidRequest("Missing required parameter: 'messages'.", "messages", "missing_required_parameter");
  }
  if (!Array.isArray(body.messages)) throw invalidType("messages", "an array of objects", body.messages);
  if (body.messages.length === 0) {
    throw invalidRequest("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", "messages", "empty_array");
  }
  body.messages.forEach((m, i) => {
    if (m === null || typeof m !== "object" || Array.isArray(m)) throw invalidType(`messages[${i}]`, "an object", m);
  });
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== "boolean") throw invalidType("stream", "a boolean", body.stream);
  return { model: body.model as string, body, stream: body.stream === true, cache };
}

/** POST /v1/embeddings: `model` and `input`; the backend checks the input's shape. */
export function checkEmbeddingsRequest(raw: unknown): CheckedRequest {
  const { body, cache } = common(raw);
  if (body.input === undefined || body.input === null) throw invalidRequest("Missing required parameter: 'input'.", "input", "missing_required_parameter");
  return { model: body.model as string, body, stream: false, cache };
}

function common(raw: unknown): { body: Record<string, unknown>; cache: boolean | undefined } {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw invalidRequest("The request body must be a JSON object.", null, "invalid_type");
  const { router, ...body } = raw as Record<string, unknown>;
  if (body.model === undefined || body.model === null || body.model === "") {
    throw invalidRequest("Missing required parameter: 'model'.", "model", "missing_required_parameter");
  }
  if (typeof body.model !== "string") throw invalidType("model", "a string", body.model);
  let cache: boolean | undefined;
  if (router !== undefined && router !== null) {
    if (typeof router !== "object" || Array.isArray(router)) throw invalidType("router", "an object", router);
    const c = (router as Record<string, unknown>).cache;
    if (c !== undefined && typeof c !== "boolean") throw invalidType("router.cache", "a boolean", c);
    cache = c as boolean | undefined;
  }
  return { body, cache };
}

function invalidType(param: string, expected: string, got: unknown) {
  const kind = got === null ? "null" : Array.isArray(got) ? "an array" : typeof got === "object" ? "an object" : `a ${typeof got}`;
  return invalidRequest(`Invalid type for '${param}': expected ${expected}, but got ${kind} instead.`, param, "invalid_type");
}
