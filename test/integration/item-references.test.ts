import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText, type ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { chatCompletion, nativeResponse } from "../helpers/mock-upstream.js";
import { useTwoKindRouter } from "../helpers/router.js";

/**
 * `item_reference` input items resolve against what the caller's key stored: the AI SDK's
 * default multi-turn (store on) sends earlier assistant turns as references with no
 * previous_response_id.
 */
const env = useTwoKindRouter();

function aiProvider() {
  return createOpenAI({ baseURL: `${env.router.url}/v1`, apiKey: "test-key" });
}

describe("item_reference (AI SDK multi-turn, store on)", () => {
  it("kind: chat: the referenced assistant message reaches the backend as history", async () => {
    const provider = aiProvider();
    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("Paris.") });
    const messages: ModelMessage[] = [{ role: "user", content: "Capital of France?" }];
    const t1 = await generateText({ model: provider.responses("local"), messages });
    expect(t1.text).toBe("Paris.");
    messages.push(...t1.response.messages, { role: "user", content: "And of Italy?" });

    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("Rome.") });
    const t2 = await generateText({ model: provider.responses("local"), messages });
    expect(t2.text).toBe("Rome.");
    const sent = env.chat.requests.at(-1)!.body.messages.map((m: any) => [m.role, m.content]);
    expect(sent).toEqual([
      ["user", "Capital of France?"],
      ["assistant", "Paris."],
      ["user", "And of Italy?"],
    ]);
  });
});
