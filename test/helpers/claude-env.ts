/**
 * A Claude (kind: anthropic) and a chat backend behind one router, for the suites that drive real
 * clients across the kinds (test/integration/qa-*-anthropic.test.ts). The Anthropic mock thinks
 * (when asked, as Anthropic does) and calls get_weather while no tool result is in the
 * conversation, then answers quoting the result; without tools it answers "Claude: <last text>".
 */
import { afterAll, beforeAll, beforeEach } from "vitest";
import { message, messageReply, startAnthropicMock, textBlock, thinkingBlock, toolUseBlock } from "./anthropic-mock.js";
import { chatBackend } from "./client-backends.js";
import { startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "./mock-upstream.js";
import { startTestRouter, type TestRouter } from "./router.js";

export const SIG = "EqQBCkgIARAB/qa+clients+sig==";
export const THINKING = "Need the weather tool for Oslo.";

export function anthropicBackend(req: RecordedRequest): Reply {
  const think = (text: string) => (req.body.thinking?.type === "enabled" ? [thinkingBlock(text, SIG)] : []);
  const messages = req.body.messages as { role: string; content: { type: string; content?: unknown }[] | string }[];
  const blocks = messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content));
  const result = blocks.filter((b) => b.type === "tool_result").at(-1);
  const hasTool = ((req.body.tools ?? []) as { name: string }[]).some((t) => t.name === "get_weather");
  if (hasTool && !result)
    return messageReply(message([...think(THINKING), toolUseBlock("toolu_qa1", "get_weather", { city: "Oslo" })], { stop_reason: "tool_use" }), req);
  if (result) return messageReply(message([textBlock(`Oslo: ${typeof result.content === "string" ? result.content : JSON.stringify(result.content)}`)]), req);
  const last = messages.at(-1)!;
  const text = typeof last.content === "string" ? last.content : ((last.content as { type: string; text?: string }[]).filter((b) => b.type === "text").at(-1)?.text ?? "");
  return messageReply(message([...think(`Thinking about ${text}`), textBlock(`Claude: ${text}`)]), req);
}

export interface ClaudeEnv {
  ant: MockUpstream;
  chat: MockUpstream;
  router: TestRouter;
}

/**
 * Registers the fixture: models `claude` (anthropic), `local` (chat), `claude-or-local` (anthropic,
 * falling back to chat) and `mix` (one pool of both); request logs and the Anthropic script reset
 * before each test. Properties are filled in by beforeAll.
 */
export function useClaudeRouter(): ClaudeEnv {
  const env = {} as ClaudeEnv;
  beforeAll(async () => {
    env.ant = await startAnthropicMock();
    env.ant.setDefault("/messages", anthropicBackend);
    env.chat = await startMockUpstream();
    env.chat.setDefault("/chat/completions", chatBackend);
    env.router = await startTestRouter({
      endpoints: [
        { name: "claude-ep", url: env.ant.url, kind: "anthropic", api_key: "sk-ant-test-0123456789" },
        { name: "box", url: env.chat.url, kind: "chat" },
      ],
      models: {
        claude: { endpoints: ["claude-ep"], upstream_model: "claude-up" },
        local: { endpoints: ["box"], upstream_model: "llama3.1:8b" },
        "claude-or-local": { endpoints: ["claude-ep"], upstream_model: "claude-up", fallbacks: ["local"] },
        mix: { endpoints: [{ name: "claude-ep", upstream_model: "claude-up" }, { name: "box", upstream_model: "llama3.1:8b" }] },
      },
      routing: { retry: { attempts: 2, max_time: "2s" }, health: { failure_threshold: 100, cooldown: "100ms" } },
    });
  });
  afterAll(async () => {
    await env.router?.close(1000);
    await env.ant?.close();
    await env.chat?.close();
  });
  beforeEach(() => {
    env.ant.requests.length = 0;
    env.chat.requests.length = 0;
    env.ant.setDefault("/messages", anthropicBackend);
    env.chat.setDefault("/chat/completions", chatBackend);
  });
  return env;
}
