import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, streamText, tool, type ModelMessage } from "ai";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { PATCH, REASONING, chatBackend, responsesBackend } from "../helpers/client-backends.js";
import { useTwoKindRouter } from "../helpers/router.js";

/**
 * The Vercel AI SDK (`ai` 7 + `@ai-sdk/openai`'s `openai.responses(model)`) as a real client
 * of the router, on both backend kinds: multi-turn, a tool loop, streaming, reasoning summaries,
 * freeform custom tools and files. Its multi-turn with `store: true` (the default) sends earlier
 * items as `item_reference`s; these tests send `store: false`, so every item travels in full.
 */
const env = useTwoKindRouter();
beforeAll(() => {
  env.chat.setDefault("/chat/completions", chatBackend);
  env.oai.setDefault("/responses", responsesBackend);
});

const provider = () => createOpenAI({ baseURL: `${env.router.url}/v1`, apiKey: "test-key" });
const noStore = { openai: { store: false } };

function weather(calls: string[]) {
  return tool({
    description: "Current weather for a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return "light snow";
    },
  });
}

for (const { kind, model } of [
  { kind: "chat", model: "local" },
  { kind: "openai", model: "gpt-4.1" },
]) {
  describe(`AI SDK on kind: ${kind}`, () => {
    it("runs a tool loop (generateText, stopWhen) and answers with the tool's result", async () => {
      const calls: string[] = [];
      const result = await generateText({ model: provider().responses(model), prompt: "Weather in Oslo?", tools: { get_weather: weather(calls) }, stopWhen: stepCountIs(3), providerOptions: noStore });
      expect(calls).toEqual(["Oslo"]);
      expect(result.text).toBe('Result: light snow');
      expect(result.steps).toHaveLength(2);
    });

    it("streams the same tool loop (streamText)", async () => {
      const calls: string[] = [];
      const result = streamText({ model: provider().responses(model), prompt: "Weather in Oslo?", tools: { get_weather: weather(calls) }, stopWhen: stepCountIs(3), providerOptions: noStore });
      let streamed = "";
      for await (const delta of result.textStream) streamed += delta;
      expect(calls).toEqual(["Oslo"]);
      expect(streamed).toBe('Result: light snow');
    });

    it("continues a conversation: turn 2 carries turn 1's messages", async () => {
      const openai = provider();
      const first = await generateText({ model: openai.responses(model), prompt: "hello", providerOptions: noStore });
      expect(first.text).toBe("Echo: hello");
      const messages: ModelMessage[] = [{ role: "user", content: "hello" }, ...first.response.messages, { role: "user", content: "again" }];
      const second = await generateText({ model: openai.responses(model), messages, providerOptions: noStore });
      expect(second.text).toBe("Echo: again");
      const sent = JSON.stringify((kind === "chat" ? env.chat : env.oai).requests.at(-1)!.body);
      expect(sent).toContain("Echo: hello");
    });

    it("gets a freeform custom tool's call with its input (openai.tools.customTool)", async () => {
      const openai = provider();
      const result = await generateText({
        model: openai.responses(model),
        prompt: "Create hello.txt",
        tools: { apply_patch: openai.tools.customTool({ description: "Edit files with a patch", format: { type: "grammar", syntax: "lark", definition: "start: /.+/s" } }) },
        providerOptions: noStore,
      });
      expect(result.toolCalls).toHaveLength(1);
      expect(result.toolCalls[0]).toMatchObject({ toolName: "apply_patch", input: PATCH });
    });
  });
}

describe("AI SDK: what only the chat kind translates", () => {
  it("shows a chat backend's reasoning when a summary is asked for (reasoningSummary), JSON and streamed", async () => {
    const openai = provider();
    // forceReasoning: the AI SDK sends `reasoning` only for models it knows reason (a local model's name it cannot know).
    const options = { openai: { store: false, reasoningSummary: "auto", forceReasoning: true } };
    const json = await generateText({ model: openai.responses("local"), prompt: "hi", providerOptions: options });
    expect(json.reasoningText).toBe(REASONING);
    expect(json.text).toBe("Echo: hi");
    const streamed = streamText({ model: openai.responses("local"), prompt: "hi", providerOptions: options });
    expect(await streamed.reasoningText).toBe(REASONING);
    expect(await streamed.text).toBe("Echo: hi");
    expect(env.chat.requests.at(-1)!.body.reasoning_effort).toBeUndefined();
  });

  it("without a summary asked for, the reasoning stays reasoning text, which the AI SDK does not show", async () => {
    const result = await generateText({ model: provider().responses("local"), prompt: "hi", providerOptions: noStore });
    expect(result.text).toBe("Echo: hi");
    expect(result.reasoningText ?? "").toBe("");
  });

  it("sends a PDF file part as a chat file part", async () => {
    const pdf = Buffer.from("%PDF-1.4 test");
    const result = await generateText({
      model: provider().responses("local"),
      messages: [{ role: "user", content: [{ type: "text", text: "read it" }, { type: "file", data: pdf, mediaType: "application/pdf", filename: "a.pdf" }] }],
      providerOptions: noStore,
    });
    expect(result.text).toBe("Echo: read it");
    const content = env.chat.requests.at(-1)!.body.messages.at(-1).content;
    expect(content).toEqual([
      { type: "text", text: "read it" },
      { type: "file", file: { file_data: `data:application/pdf;base64,${pdf.toString("base64")}`, filename: "a.pdf" } },
    ]);
  });
});
