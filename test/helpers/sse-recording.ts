/**
 * A recorded chat-completions stream as a Python (sse-starlette) server frames it: comments,
 * `event:`/`id:`/`retry:` fields, a `data:` field split over several lines (the JSON stays
 * valid: the lines are joined with "\n"), multi-byte UTF-8 text and `[DONE]`. Written with LF
 * here; withLineEnds() turns it into CRLF or CR framing.
 */
export type LineEnd = "\n" | "\r\n" | "\r";

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  JSON.stringify({ id: "chatcmpl-rec", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] });

export function recordedChatStream(): { text: string; frames: { event: string | undefined; data: string }[]; content: string } {
  const first = chunk({ role: "assistant", content: "" });
  // One JSON object spread over three data lines.
  const multi = ['{"id":"chatcmpl-rec","object":"chat.completion.chunk",', '"created":1,"model":"m",', '"choices":[{"index":0,"delta":{"content":"Grüße, "},"finish_reason":null}]}'];
  const parts = ["naïve ", "café ", "→ 😀", " done"];
  const frames: { event: string | undefined; data: string }[] = [];
  let text = ": ping - 2026-01-01 00:00:00\n\n";
  text += `id: 1\nretry: 1500\ndata: ${first}\n\n`;
  frames.push({ event: undefined, data: first });
  text += multi.map((l) => `data: ${l}\n`).join("") + "\n";
  frames.push({ event: undefined, data: multi.join("\n") });
  for (const p of parts) {
    const d = chunk({ content: p });
    text += `event: message\ndata:${d}\n\n`; // no space after the colon: allowed
    frames.push({ event: "message", data: d });
  }
  text += ": keep-alive\n\n";
  const last = chunk({}, "stop");
  text += `data: ${last}\n\n`;
  frames.push({ event: undefined, data: last });
  text += "data: [DONE]\n\n";
  frames.push({ event: undefined, data: "[DONE]" });
  return { text, frames, content: `Grüße, ${parts.join("")}` };
}

export function withLineEnds(text: string, eol: LineEnd): string {
  return eol === "\n" ? text : text.replace(/\n/g, eol);
}
