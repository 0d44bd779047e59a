/**
 * Scripted backends for the real-client suites (AI SDK, LangChain, the openai SDK): one chat
 * backend and one Responses backend that behave alike, so a client's turn reads the same on
 * both kinds. Each answers by what the request holds:
 * - a tool result in the conversation -> text quoting it;
 * - a `get_weather` tool offered (or a chat name ending in it: a flattened namespace member) -> a call of it for Oslo;
 * - an `apply_patch` tool offered -> a freeform call with PATCH as its input;
 * - else -> "Echo: <last user text>".
 * The chat backend also sends REASONING as `reasoning_content` first.
 */
import { chatChunk, chatCompletion, nativeEvents, nativeResponse, usageChunk, type RecordedRequest, type Reply } from "./mock-upstream.js";

export const REASONING = "Thinking about it.";
export const PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+Hello from the router\n*** End Patch\n";

type Msg = { role: string; content: unknown; tool_calls?: unknown[] };

const textOf = (content: unknown): string =>
  typeof content === "string" ? content : Array.isArray(content) ? content.map((p: { text?: string }) => p?.text ?? "").join("") : "";

export function chatBackend(req: RecordedRequest): Reply {
  const messages = req.body.messages as Msg[];
  const names = ((req.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
  const last = messages.at(-1)!;
  let call: { id: string; name: string; args: string } | null = null;
  let text = "";
  if (last.role === "tool") text = `Result: ${textOf(last.content)}`;
  else if (names.some((n) => n.endsWith("get_weather"))) call = { id: "call_w1", name: names.find((n) => n.endsWith("get_weather"))!, args: JSON.stringify({ city: "Oslo" }) };
  else if (names.includes("apply_patch")) call = { id: "call_p1", name: "apply_patch", args: JSON.stringify({ input: PATCH }) };
  else text = `Echo: ${textOf(last.content)}`;
  const model = req.body.model as string;
  if (!req.body.stream) {
    const tool_calls = call ? [{ id: call.id, type: "function", function: { name: call.name, arguments: call.args } }] : undefined;
    return { kind: "json", body: chatCompletion(call ? null : text, model, { tool_calls, reasoning_content: REASONING }) };
  }
  const frames = [chatChunk({ role: "assistant", content: "" }, null, model), chatChunk({ reasoning_content: REASONING.slice(0, 8) }, null, model), chatChunk({ reasoning_content: REASONING.slice(8) }, null, model)];
  if (call) {
    frames.push(chatChunk({ tool_calls: [{ index: 0, id: call.id, type: "function", function: { name: call.name, arguments: call.args.slice(0, 10) } }] }, null, model));
    frames.push(chatChunk({ tool_calls: [{ index: 0, function: { arguments: call.args.slice(10) } }] }, null, model));
  } else {
    frames.push(chatChunk({ content: text.slice(0, 5) }, null, model), chatChunk({ content: text.slice(5) }, null, model));
  }
  frames.push(chatChunk({}, call ? "tool_calls" : "stop", model), usageChunk(11, 7, {}, model));
  return { kind: "sse", frames: [...frames, "data: [DONE]\n\n"] };
}

export function responsesBackend(req: RecordedRequest): Reply {
  const input = (typeof req.body.input === "string" ? [{ role: "user", content: req.body.input }] : req.body.input) as { type?: string; role?: string; content?: unknown; output?: unknown }[];
  const tools = ((req.body.tools ?? []) as { name?: string }[]).map((t) => t.name);
  const last = input.at(-1)!;
  let resp = nativeResponse("", req.body.model, "resp_up1");
  if (last.type === "function_call_output" || last.type === "custom_tool_call_output") {
    resp = nativeResponse(`Result: ${textOf(last.output)}`, req.body.model, "resp_up2");
  } else if (tools.includes("get_weather")) {
    resp = { ...resp, output: [{ id: "fc_up1", type: "function_call", status: "completed", call_id: "call_w1", name: "get_weather", arguments: JSON.stringify({ city: "Oslo" }) }] } as typeof resp;
  } else if (tools.includes("apply_patch")) {
    resp = { ...resp, output: [{ id: "ctc_up1", type: "custom_tool_call", status: "completed", call_id: "call_p1", name: "apply_patch", input: PATCH }] } as unknown as typeof resp;
  } else {
    resp = nativeResponse(`Echo: ${textOf(last.content)}`, req.body.model, "resp_up3");
  }
  return req.body.stream ? { kind: "sse", frames: nativeEvents(resp) } : { kind: "json", body: resp };
}
