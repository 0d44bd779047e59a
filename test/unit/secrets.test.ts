import { describe, expect, it } from "vitest";
import { scrubSecret, scrubSecrets } from "../../src/ops/secrets.js";

const KEY = "sk-proj-abcdef0123456789";

describe("scrubbing secrets out of text", () => {
  it("removes the value and the 8-character head an upstream echoes of it", () => {
    expect(scrubSecret(`bad key ${KEY} given`, KEY)).toBe("bad key [redacted] given");
    expect(scrubSecret("Incorrect API key provided: sk-proj-********6789.", KEY)).toBe("Incorrect API key provided: [redacted]********6789.");
    // Inside JSON text too (an error body, a stream event).
    expect(scrubSecret(JSON.stringify({ error: { message: `key ${KEY}` } }), KEY)).toBe('{"error":{"message":"key [redacted]"}}');
  });

  it("leaves text without it, and values too short to be credentials, untouched", () => {
    const text = "nothing here: none, EMPTY";
    expect(scrubSecret(text, KEY)).toBe(text);
    expect(scrubSecret(text, "none")).toBe(text);
    expect(scrubSecret(text, "EMPTY")).toBe(text);
    expect(scrubSecret(text, undefined)).toBe(text);
  });

  it("removes every secret of a list (an MCP server's header values and token)", () => {
    const token = "mcp-token-0123456789";
    const header = "Bearer zz-header-secret-42";
    const message = `401 from server: token ${token} and ${header} rejected; echoed head mcp-toke...`;
    expect(scrubSecrets(message, [header, token, undefined, "json"])).toBe("401 from server: token [redacted] and [redacted] rejected; echoed head [redacted]...");
  });
});
