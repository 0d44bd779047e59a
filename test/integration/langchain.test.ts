import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { beforeAll, describe, expect, it } from "vitest";
import { REASONING, chatBackend, responsesBackend } from "../helpers/client-backends.js";
import { useTwoKindRouter } from "../helpers/router.js";

/**
 * LangChain (`@langchain/openai` ChatOpenAI with `useResponsesApi: true`) as a real client of
 * the router, on both backend kinds: a tool round trip over two turns (the model's call, the
 * tool's result as a ToolMessage, the answer), streaming, and reasoning summaries it shows.
 */
const env = useTwoKindRouter();
beforeAll(() => {
  env.chat.setDefault("/chat/completions", chatBackend);
  env.oai.setDefault("/responses", responsesBackend);
});

const chat = (model: string, extra: Record<string, unknown> = {}) =>
  new ChatOpenAI({ model, apiKey: "test-key", useResponsesApi: true, maxRetries: 0, configuration: { baseURL: `${env.router.url}/v1` }, ...extra });

const weatherTool = {
  type: "function" as const,
  function: { name: "get_weather", description: "Current weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};

for (const { kind, model } of [
  { kind: "chat", model: "local" },
  { kind: "openai", model: "gpt-4.1" },
]) {
  describe(`LangChain on kind: ${kind}`, () => {
    for (const streaming of [false, true]) {
      it(`runs a tool round trip over two turns (${streaming ? "streamed" : "invoke"})`, async () => {
        const llm = chat(model, { streaming }).bindTools([weatherTool]);
        const history: BaseMessage[] = [new HumanMessage("Weather in Oslo?")];
        const first = (await llm.invoke(history)) as AIMessage;
        expect(first.tool_calls).toHaveLength(1);
        expect(first.tool_calls![0]).toMatchObject({ name: "get_weather", args: { city: "Oslo" }, id: "call_w1" });
        history.push(first, new ToolMessage({ content: "light snow", tool_call_id: "call_w1" }));
        const second = (await llm.invoke(history)) as AIMessage;
        expect(second.text).toBe("Result: light snow");
        const upstream = (kind === "chat" ? env.chat : env.oai).requests.at(-1)!.body;
        if (kind === "chat") {
          expect(upstream.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "call_w1", content: "light snow" });
          expect(upstream.messages.at(-2).tool_calls[0]).toMatchObject({ id: "call_w1", function: { name: "get_weather" } });
        } else {
          expect(upstream.input.at(-1)).toMatchObject({ type: "function_call_output", call_id: "call_w1", output: "light snow" });
        }
      });
    }

    it("streams text chunk by chunk (.stream)", async () => {
      let text = "";
      let chunks = 0;
      for await (const chunk of await chat(model).stream("hello")) {
        text += (chunk as AIMessageChunk).text;
        chunks++;
      }
      expect(text).toBe("Echo: hello");
      expect(chunks).toBeGreaterThan(1);
    });
  });
}

describe("LangChain: a chat backend's reasoning as the summary it shows", () => {
  for (const streaming of [false, true]) {
    it(`reasoning.summary set -> a reasoning content block (${streaming ? "streamed" : "invoke"})`, async () => {
      // LangChain sends `reasoning` itself only for model names it knows reason (o*, gpt-5*); for a local model it goes in modelKwargs.
      const llm = chat("local", { streaming, modelKwargs: { reasoning: { effort: "low", summary: "auto" } } });
      const answer = (await llm.invoke("hi")) as AIMessage;
      expect(answer.text).toBe("Echo: hi");
      const blocks = (Array.isArray(answer.content) ? answer.content : []) as { type: string; reasoning?: string }[];
      const shown = blocks.filter((b) => b.type === "reasoning").map((b) => b.reasoning).join("");
      const kwargs = answer.additional_kwargs.reasoning as { summary?: { text: string }[] } | undefined;
      expect(shown || kwargs?.summary?.map((s) => s.text).join("")).toBe(REASONING);
      expect(env.chat.requests.at(-1)!.body.reasoning_effort).toBe("low");
    });
  }
});
