/**
 * What one more serialisation of a JSON answer costs: JSON.stringify of a ~1 KB Response (as a
 * translated answer is) against the walk that finds whether anything in it is hidden from the
 * client (hasHiddenParts), in process. Prints µs per call for three rounds.
 *   npx tsx test/bench/serialise-cost.ts
 */
import { hasHiddenParts } from "../../src/translate/openai/rewrite.js";
import { nativeResponse } from "../helpers/mock-upstream.js";

const response = {
  ...nativeResponse("Hello! How can I help you today?"),
  background: false,
  text: { format: { type: "text" }, verbosity: "medium" },
  reasoning: { effort: null, summary: null },
  truncation: "disabled",
  user: null,
  prompt_cache_key: null,
  safety_identifier: null,
  service_tier: "default",
  max_output_tokens: null,
  max_tool_calls: null,
  previous_response_id: null,
  top_logprobs: 0,
  prompt_cache_retention: null,
  conversation: null,
};
const N = 200_000;
const perCall = (fn: () => unknown) => {
  const t = process.hrtime.bigint();
  for (let i = 0; i < N; i++) fn();
  return Number(process.hrtime.bigint() - t) / N / 1000;
};
for (let round = 1; round <= 3; round++) {
  const stringify = perCall(() => JSON.stringify(response));
  const walk = perCall(() => hasHiddenParts(response, true, false));
  console.log(`round ${round}: JSON.stringify ${stringify.toFixed(2)} µs (${JSON.stringify(response).length} B), hasHiddenParts ${walk.toFixed(2)} µs`);
}
