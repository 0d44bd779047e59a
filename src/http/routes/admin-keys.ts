import { createHash, randomBytes } from "node:crypto";
import type { Hono } from "hono";
import { z } from "zod";
import { apiKeySchema } from "../../config/schema.js";
import { ApiError, invalidRequest, notFound } from "../../ops/errors.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { KeyPolicyPatch, StoredKey } from "../../store/keys.js";
import type { ApiKey } from "../../keys/policy.js";
import { secretDigest } from "../auth.js";
import { readJsonBody, type AppEnv } from "../context.js";
import { requireAdmin } from "./admin.js";

/**
 * The admin API of keys: POST/GET /v1/admin/keys, GET/POST/DELETE /v1/admin/keys/{id}, for
 * admin keys. A made key's secret is returned once, by the create; the store keeps its SHA-256
 * (store/keys.ts), every list and page shows `sk-...abcd`. The config's keys are listed too,
 * `source: "config"`, read-only (router.yaml owns them). A change is in this instance's key ring
 * before the answer leaves, and in every other instance's within a second (keys/key-ring.ts).
 */
export function adminKeysRoutes(app: Hono<AppEnv>, rt: Runtime): void {
  app.post("/v1/admin/keys", async (c) => {
    requireAdmin(c, rt, "api.keys.write");
    if (rt.config.server.api_keys.length === 0) {
      throw invalidRequest("This router runs without keys (server.api_keys is empty), so every route is open: add an admin key to server.api_keys before making keys by API.", null, "router_without_keys");
    }
    const body = parse(createSchema, await readJsonBody(c));
    checkModels(rt, body.models);
    checkExpiry(rt, body.expires_at);
    if (rt.config.server.api_keys.some((k) => k.name === body.name)) throw nameTaken(body.name);
    const secret = `sk-rr-${randomBytes(24).toString("base64url")}`;
    const key: StoredKey = {
      id: `key_${randomBytes(12).toString("hex")}`,
      hash: secretDigest(secret),
      redacted_value: redact(secret),
      name: body.name,
      role: body.role,
      models: body.models ?? undefined,
      limits: body.limits ?? undefined,
      budget: body.budget ?? undefined,
      tools: body.tools ?? undefined,
      expires_at: body.expires_at ?? null,
      metadata: body.metadata ?? {},
      created_at: Math.floor(rt.now() / 1000),
    };
    if ((await store(rt, "create", () => rt.stores.keys.create(key))) === "name_taken") throw nameTaken(body.name);
    await rt.keyRing.sync(true);
    rt.log.info({ key: key.name, id: key.id, role: key.role }, "api key created");
    return c.json({ ...madeView(key), key: secret }, 201);
  });

  app.get("/v1/admin/keys", async (c) => {
    requireAdmin(c, rt, "api.keys.read");
    const made = await store(rt, "list", () => rt.stores.keys.list());
    return c.json({ object: "list", data: [...rt.config.server.api_keys.map(configView), ...made.map(madeView)] });
  });

  app.get("/v1/admin/keys/:id", async (c) => {
    requireAdmin(c, rt, "api.keys.read");
    const id = c.req.param("id");
    const config = configKey(rt, id);
    if (config) return c.json(configView(config));
    return c.json(madeView(await existing(rt, id)));
  });

  app.post("/v1/admin/keys/:id", async (c) => {
    requireAdmin(c, rt, "api.keys.write");
    const id = c.req.param("id");
    readOnly(rt, id);
    const patch = parse(updateSchema, await readJsonBody(c));
    checkModels(rt, patch.models);
    checkExpiry(rt, patch.expires_at);
    // null takes a field away (every model, no limits, never expires); absent leaves it.
    const change: KeyPolicyPatch = { ...patch, metadata: patch.metadata === null ? {} : patch.metadata };
    const updated = await store(rt, "update", () => rt.stores.keys.update(id, change));
    if (!updated) throw keyNotFound(id);
    await rt.keyRing.sync(true);
    rt.log.info({ key: updated.name, id }, "api key updated");
    return c.json(madeView(updated));
  });

  app.delete("/v1/admin/keys/:id", async (c) => {
    requireAdmin(c, rt, "api.keys.write");
    const id = c.req.param("id");
    readOnly(rt, id);
    const key = await existing(rt, id);
    if (!(await store(rt, "revoke", () => rt.stores.keys.revoke(id)))) throw keyNotFound(id);
    await rt.keyRing.sync(true);
    rt.log.info({ key: key.name, id }, "api key revoked");
    return c.json({ object: "admin.key.deleted", id, name: key.name, deleted: true });
  });
}

const policy = apiKeySchema.pick({ models: true, limits: true, budget: true, tools: true }).shape;
/** OpenAI's metadata: at most 16 pairs, keys up to 64 characters, values up to 512. */
const metadata = z
  .record(z.string().max(64), z.string().max(512))
  .refine((m) => Object.keys(m).length <= 16, "metadata holds at most 16 keys");
const expiresAt = z.number().int().positive();

/** The policy fields a made key has, as POST /v1/admin/keys/{id} takes them. */
const updateSchema = z
  .object({
    role: z.enum(["admin", "user"]).optional(),
    models: policy.models.nullable(),
    limits: policy.limits.nullable(),
    budget: policy.budget.nullable(),
    tools: policy.tools.nullable(),
    expires_at: expiresAt.nullable().optional(),
    metadata: metadata.nullable().optional(),
  })
  .strict();

/** A new key: a name, and the policy fields (role defaults to user). */
const createSchema = updateSchema.extend({ name: apiKeySchema.shape.name, role: z.enum(["admin", "user"]).default("user") }).strict();

/** The body checked against a schema; the first problem as OpenAI's 400, its field as `param`. */
function parse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw invalidRequest("The request body must be a JSON object.", null, "invalid_body");
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0]!] : issue.path;
  const param = path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");
  if (issue.code === "unrecognized_keys") throw invalidRequest(`Unknown parameter: '${param}'.`, param, "unknown_parameter");
  const missing = issue.code === "invalid_type" && path.reduce<unknown>((v, p) => (v as Record<PropertyKey, unknown> | undefined)?.[p], body) === undefined;
  throw invalidRequest(missing ? `Missing required parameter: '${param}'.` : `Invalid '${param}': ${issue.message}.`, param || null, missing ? "missing_required_parameter" : "invalid_value");
}

/** Model names must be configured ones (globs may name models to come), as the config's keys. */
function checkModels(rt: Runtime, models: string[] | null | undefined): void {
  models?.forEach((m, i) => {
    if (!/[*?]/.test(m) && !Object.hasOwn(rt.config.models, m)) throw invalidRequest(`Invalid 'models[${i}]': the router has no model '${m}'.`, `models[${i}]`, "invalid_value");
  });
}

function checkExpiry(rt: Runtime, at: number | null | undefined): void {
  if (typeof at === "number" && at * 1000 <= rt.now()) throw invalidRequest(`Invalid 'expires_at': ${at} is not in the future (Unix seconds).`, "expires_at", "invalid_value");
}

const nameTaken = (name: string) => new ApiError(409, `An API key named '${name}' already exists: key names are unique (usage, limits and metrics count by them).`, { type: "invalid_request_error", param: "name", code: "name_taken" });
const keyNotFound = (id: string) => notFound(`No API key with id '${id}'.`, "id", "key_not_found");

/** `sk-...abcd`: the last four characters of a secret, never more. */
export function redact(secret: string): string {
  return `sk-...${secret.slice(-4)}`;
}

/** A config key's id: stable across restarts and instances, and nothing of its secret. */
function configId(name: string): string {
  return `key_config_${createHash("sha256").update(name).digest("hex").slice(0, 16)}`;
}

function configKey(rt: Runtime, id: string): ApiKey | undefined {
  return id.startsWith("key_config_") ? rt.config.server.api_keys.find((k) => configId(k.name) === id) : undefined;
}

function readOnly(rt: Runtime, id: string): void {
  const k = configKey(rt, id);
  if (k) throw invalidRequest(`API key '${k.name}' comes from the router's config (source: config) and is read-only here: change it in router.yaml.`, "id", "key_read_only");
}

async function existing(rt: Runtime, id: string): Promise<StoredKey> {
  const key = await store(rt, "get", () => rt.stores.keys.get(id));
  if (!key) throw keyNotFound(id);
  return key;
}

/** A store call of the admin API: 503 store_unavailable when the store cannot answer. */
async function store<T>(rt: Runtime, op: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    rt.metrics.storeErrors.inc({ store: "keys", op });
    throw new ApiError(503, `The router's key store is unavailable: ${(err as Error).message}`, { type: "server_error", code: "store_unavailable" });
  }
}

/** A key as every answer shows it: the policy fields, the redacted secret, where it comes from. */
function view(k: ApiKey | StoredKey, made: StoredKey | null) {
  return {
    object: "admin.key",
    id: made ? made.id : configId(k.name),
    name: k.name,
    source: made ? ("api" as const) : ("config" as const),
    read_only: !made,
    redacted_value: made ? made.redacted_value : redact((k as ApiKey).key),
    role: k.role,
    models: k.models ?? null,
    limits: k.limits ?? null,
    budget: k.budget ?? null,
    tools: k.tools ?? null,
    expires_at: made ? made.expires_at : null,
    metadata: made ? made.metadata : {},
    created_at: made ? made.created_at : null,
  };
}

const configView = (k: ApiKey) => view(k, null);
const madeView = (k: StoredKey) => view(k, k);
