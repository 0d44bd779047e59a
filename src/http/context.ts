import type { Context } from "hono";
import { ApiError, invalidRequest } from "../errors.js";

/** What a request carries through the middleware chain. */
export interface RequestStats {
  route: string;
  model: string;
  endpoint: string;
  /** Time spent on the upstream call, when there was one (overhead = total - this). */
  upstreamMs?: number;
}

export type AppEnv = {
  Variables: {
    owner: string | null;
    requestId: string;
    stats: RequestStats;
  };
};

/** Reads a JSON body with OpenAI-shaped errors for empty, oversized or malformed input. */
export async function readJsonBody(c: Context<AppEnv>): Promise<unknown> {
  let text: string;
  try {
    text = await c.req.text();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw invalidRequest("Could not read the request body.", null, "invalid_body");
  }
  if (text.length === 0) throw invalidRequest("The request body is empty; send a JSON object.", null, "invalid_body");
  try {
    return JSON.parse(text);
  } catch {
    throw invalidRequest(
      "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
      null,
      "invalid_json",
    );
  }
}
