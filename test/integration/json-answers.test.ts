import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { useTwoKindRouter } from "../helpers/router.js";

/**
 * The hot JSON answers (POST /v1/responses without a stream, the chat pass-through's JSON) are
 * written to the Node response directly: the wire must carry exactly the headers and body a
 * Hono Response gave before (header names as they were, in the same order, Content-Length of
 * the body's bytes), and an in-process `app.request` gets the same answer as a Response.
 */
const env = useTwoKindRouter();

interface RawAnswer {
  status: number;
  /** Header names as written on the wire, in order, without the date. */
  names: string[];
  headers: Record<string, string>;
  body: Buffer;
}

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(`${env.router.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => {
        const names: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i]!.toLowerCase() !== "date") names.push(res.rawHeaders[i]!);
        resolve({ status: res.statusCode!, names, headers: res.headers as Record<string, string>, body: Buffer.concat(chunks) });
      });
    });
    req.on("error", reject);
    req.end(typeof body === "string" ? body : JSON.stringify(body));
  });
}

describe("JSON answers written to the socket", () => {
  it("POST /v1/responses: the request id, the served model, Content-Type and the body's exact length", async () => {
    const res = await post("/v1/responses", { model: "gpt-4.1", input: "héllo" }, { "x-request-id": "json-1" });
    expect(res.status).toBe(200);
    expect(res.names).toEqual(["x-request-id", "x-router-model", "Content-Type", "Connection", "Keep-Alive", "Content-Length"]);
    expect(res.headers["x-request-id"]).toBe("json-1");
    expect(res.headers["x-router-model"]).toBe("gpt-4.1");
    expect(res.headers["content-type"]).toBe("application/json");
    expect(Number(res.headers["content-length"])).toBe(res.body.length);
    const response = JSON.parse(res.body.toString("utf8"));
    expect(response).toMatchObject({ object: "response", status: "completed", model: "gpt-4.1", store: true });
    expect(response.id).toMatch(/^resp_/);
  });

  it("the translated answer of a chat backend takes the same way", async () => {
    const res = await post("/v1/responses", { model: "local", input: "hi" });
    expect(res.status).toBe(200);
    expect(res.names).toEqual(["x-request-id", "x-router-model", "Content-Type", "Connection", "Keep-Alive", "Content-Length"]);
    expect(res.headers["x-request-id"]).toMatch(/^req_/);
    expect(Number(res.headers["content-length"])).toBe(res.body.length);
    expect(JSON.parse(res.body.toString("utf8"))).toMatchObject({ object: "response", status: "completed", model: "local" });
  });

  it("POST /v1/chat/completions: the upstream's JSON as it came, model name mapped, lower-case content-type", async () => {
    const res = await post("/v1/chat/completions", { model: "local", messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    expect(res.names).toEqual(["x-request-id", "x-router-model", "content-type", "Connection", "Keep-Alive", "Content-Length"]);
    expect(res.headers["x-router-model"]).toBe("local");
    expect(Number(res.headers["content-length"])).toBe(res.body.length);
    expect(JSON.parse(res.body.toString("utf8"))).toMatchObject({ object: "chat.completion", model: "local" });
  });

  it("is counted with its status once the answer is written", async () => {
    await post("/v1/responses", { model: "gpt-4.1", input: "count me" });
    const text = await (await env.router.fetch("/metrics")).text();
    expect(text).toMatch(/responses_router_responses_total\{transport="http",model="gpt-4.1",status="200"\} [1-9]/);
  });

  it("errors too: status, OpenAI's body, the same headers, counted and logged with their status", async () => {
    const missing = await post("/v1/responses", { model: "nope", input: "hi" }, { "x-request-id": "err-1" });
    expect(missing.status).toBe(404);
    expect(missing.names).toEqual(["x-request-id", "content-type", "Connection", "Keep-Alive", "Content-Length"]);
    expect(missing.headers["content-type"]).toBe("application/json");
    expect(Number(missing.headers["content-length"])).toBe(missing.body.length);
    expect(JSON.parse(missing.body.toString("utf8"))).toEqual({ error: { message: "The model `nope` does not exist or you do not have access to it.", type: "invalid_request_error", param: "model", code: "model_not_found" } });
    const malformed = await post("/v1/chat/completions", "{");
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body.toString("utf8")).error.code).toBe("invalid_json");
    const text = await (await env.router.fetch("/metrics")).text();
    expect(text).toMatch(/responses_router_requests_total\{route="\/v1\/responses",model="",upstream="",status="404",key="[^"]*"\} [1-9]/);
    expect(text).toMatch(/responses_router_requests_total\{route="\/v1\/chat\/completions",model="",upstream="",status="400",key="[^"]*"\} [1-9]/);
  });

  it("in process (app.request), the same answers as Responses", async () => {
    const { app } = buildApp(env.router.runtime);
    const res = await app.request("/v1/responses", { method: "POST", headers: { "content-type": "application/json", "x-request-id": "in-proc" }, body: JSON.stringify({ model: "gpt-4.1", input: "hi" }) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("x-request-id")).toBe("in-proc");
    expect(res.headers.get("x-router-model")).toBe("gpt-4.1");
    expect(await res.json()).toMatchObject({ object: "response", status: "completed" });
    const chat = await app.request("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "local", messages: [{ role: "user", content: "hi" }] }) });
    expect(chat.status).toBe(200);
    expect(chat.headers.get("content-type")).toBe("application/json");
    expect(await chat.json()).toMatchObject({ object: "chat.completion", model: "local" });
  });
});
