/**
 * An Anthropic error body (`{"type":"error","error":{"type":"overloaded_error","message":...}}`,
 * already read into the OpenAI shape by the upstream client) as OpenAI names it: OpenAI's error
 * types, a code where OpenAI has one, and the Responses parameter where Anthropic's message
 * starts with the field it is about (`max_tokens: Field required` -> `max_output_tokens`); a
 * prompt over the model's window is OpenAI's `context_length_exceeded` on `input`.
 */
export interface ErrorBody {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

/** Anthropic's error type -> OpenAI's type and code. */
const TYPES: Record<string, { type: string; code: string | null }> = {
  invalid_request_error: { type: "invalid_request_error", code: null },
  authentication_error: { type: "authentication_error", code: "invalid_api_key" },
  permission_error: { type: "permission_error", code: null },
  not_found_error: { type: "invalid_request_error", code: "not_found" },
  request_too_large: { type: "invalid_request_error", code: "request_too_large" },
  rate_limit_error: { type: "rate_limit_error", code: "rate_limit_exceeded" },
  api_error: { type: "server_error", code: "upstream_error" },
  overloaded_error: { type: "server_error", code: "upstream_overloaded" },
  timeout_error: { type: "server_error", code: "upstream_timeout" },
};

/** Anthropic's request fields -> the Responses parameter a client set them with. */
const FIELDS: [RegExp, (m: RegExpExecArray) => string][] = [
  [/^max_tokens\b/, () => "max_output_tokens"],
  [/^messages(\.\d+)?/, () => "input"],
  [/^system\b/, () => "instructions"],
  [/^tools\.(\d+)(?:\.(\w+))?/, (m) => `tools[${m[1]}]${m[2] ? `.${m[2] === "input_schema" ? "parameters" : m[2]}` : ""}`],
  [/^tool_choice\b/, () => "tool_choice"],
  [/^thinking\b/, () => "reasoning"],
  [/^output_config\.effort\b/, () => "reasoning.effort"],
  [/^output_config\b/, () => "text.format"],
  [/^stop_sequences\b/, () => "stop"],
  [/^metadata\b/, () => "safety_identifier"],
  [/^(temperature|top_p|model)\b/, (m) => m[1]!],
];

const PROMPT_TOO_LONG = /\bprompt is too long\b/i;

export function anthropicErrorBody(body: ErrorBody, status: number): ErrorBody {
  const known = TYPES[body.type];
  const type = known?.type ?? (status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error");
  let code = body.code ?? known?.code ?? null;
  if (code === "not_found" && /model/i.test(body.message)) code = "model_not_found";
  // Anthropic's too-long input ("prompt is too long: N tokens > M maximum") is OpenAI's context_length_exceeded.
  if (status === 400 && PROMPT_TOO_LONG.test(body.message)) return { message: body.message, type: "invalid_request_error", param: "input", code: "context_length_exceeded" };
  return { message: body.message, type, param: body.param ?? paramOf(body.message), code };
}

/** The Responses parameter an Anthropic message names as its `field.path: ` prefix, or null. */
export function paramOf(message: string): string | null {
  const colon = message.indexOf(": ");
  if (colon <= 0) return null;
  const path = message.slice(0, colon);
  if (!/^[a-z_]+(\.[\w-]+)*$/.test(path)) return null;
  for (const [re, name] of FIELDS) {
    const m = re.exec(path);
    if (m) return name(m);
  }
  return null;
}
