import { setTimeout as delay } from "node:timers/promises";

/**
 * Polls `check` until it returns true, every `everyMs`, for at most `withinMs`.
 * Throws with `what` when the condition never held: a bounded wait for a state,
 * not an assertion about how long it took.
 */
export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, withinMs = 5_000, everyMs = 20): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${withinMs} ms waiting for: ${what}`);
    await delay(everyMs);
  }
}

/** POST /v1/responses with a JSON body through plain fetch (for status codes, headers and raw SSE). */
export function postResponses(baseUrl: string, body: unknown, init: { headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> {
  return fetch(`${baseUrl}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: JSON.stringify(body),
    signal: init.signal,
  });
}

/** Reads a fetch body until `predicate(textSoFar)` holds (or the body ends); returns the text read. */
export async function readUntil(res: Response, predicate: (text: string) => boolean): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
    if (predicate(text)) {
      reader.releaseLock();
      return text;
    }
  }
}

/** Reads what is left of a fetch body (after readUntil); a body cut by the server ends the text where it broke. */
export async function readRest(res: Response): Promise<{ text: string; broken: boolean }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { text, broken: false };
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return { text, broken: true };
  }
}
