/**
 * A Response as OpenAI's API writes it: every member, in its order, `user: null` before
 * `metadata`. What a `kind: openai` endpoint answers; `fields` replace members in place (their
 * order is kept) or are added after.
 */
export function openaiResponse(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: "resp_upstream0001",
    object: "response",
    created_at: 1,
    status: "completed",
    background: false,
    completed_at: 2,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    max_tool_calls: null,
    model: "gpt-4.1-2025-04-14",
    output: [],
    parallel_tool_calls: true,
    presence_penalty: 0,
    frequency_penalty: 0,
    previous_response_id: null,
    prompt_cache_key: null,
    prompt_cache_retention: null,
    reasoning: { effort: null, summary: null },
    safety_identifier: null,
    service_tier: "default",
    store: false,
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: [],
    top_logprobs: 0,
    top_p: 1,
    truncation: "disabled",
    usage: null,
    user: null,
    metadata: {},
    ...fields,
  };
}
