import type { z } from "zod";
import { duration, routerConfigSchema } from "./schema.js";

/**
 * docs/configuration.md, rendered from the zod schema: every key with its type, its default and
 * its `.describe()` text, one table per top-level section. Generated (`npm run docs`) and checked
 * by a test, so the reference can never disagree with the code. The JSON Schema cannot be the
 * source: a duration's default is lost in it (the key takes "30s" or seconds, the default is
 * milliseconds after the transform), so the walk reads the zod definitions themselves.
 */

/** Where each section is explained at length (pages under docs/). */
const GUIDES: Record<string, string> = {
  server: "[keys.md](keys.md) (api_keys), [operations.md](operations.md#shutdown) (shutdown), [websocket.md](websocket.md)",
  endpoints: "[backends.md](backends.md)",
  models: "[backends.md](backends.md), [routing.md](routing.md#fallbacks), [tools.md](tools.md#what-runs-where) (hosted_tools)",
  files: "[backends.md](backends.md#files)",
  routing: "[routing.md](routing.md)",
  storage: "[operations.md](operations.md#redis-mode-and-several-instances), [operations.md](operations.md#redis-that-fails-over)",
  background: "[api.md](api.md#background-mode)",
  compaction: "[compaction.md](compaction.md)",
  tools: "[tools.md](tools.md)",
  logging: "[operations.md](operations.md#logs)",
  tracing: "[operations.md](operations.md#traces)",
};

type Def = { type: string } & Record<string, unknown>;
type Schema = z.ZodType & { _zod: { def: Def }; description?: string };

interface Row {
  key: string;
  type: string;
  default: string;
  meaning: string;
}

function formatMs(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, "d"],
    [3_600_000, "h"],
    [60_000, "m"],
    [1_000, "s"],
  ];
  for (const [size, unit] of units) if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** Strips optional/default/prefault wrappers: the inner schema, its default and any description met on the way. */
function unwrap(schema: Schema): { inner: Schema; fallback?: unknown; description?: string; required: boolean } {
  let s = schema;
  let fallback: unknown;
  let description = s.description;
  let required = true;
  for (;;) {
    const def = s._zod.def;
    if (def.type === "optional" || def.type === "prefault") required = false;
    else if (def.type === "default") [fallback, required] = [def.defaultValue, false];
    else break;
    s = def.innerType as Schema;
    description ??= s.description;
  }
  return { inner: s, fallback, description, required };
}

function typeOf(s: Schema): string {
  if (s === (duration as unknown)) return "duration";
  const def = s._zod.def;
  switch (def.type) {
    case "enum":
      return Object.values(def.entries as Record<string, string>)
        .map((v) => `\`${v}\``)
        .join(" | ");
    case "number":
      return (s as unknown as { isInt?: boolean }).isInt ? "integer" : "number";
    case "array":
      return `list of ${typeOf(unwrap(def.element as Schema).inner)}`;
    case "record":
      return `map of ${typeOf(unwrap(def.valueType as Schema).inner)}`;
    case "pipe":
      return typeOf(def.in as Schema);
    case "union":
      return (def.options as Schema[]).map((o) => typeOf(unwrap(o).inner)).join(" or ");
    default:
      return def.type;
  }
}

function formatDefault(inner: Schema, value: unknown, required: boolean): string {
  if (value === undefined) return required ? "required" : inner._zod.def.type === "object" ? "" : "unset";
  if (inner === (duration as unknown) && typeof value === "number") return `\`${formatMs(value)}\``;
  const mib = 1024 * 1024;
  if (typeof value === "number" && value >= mib && value % mib === 0) return `\`${value}\` (${value / mib} MiB)`;
  return `\`${JSON.stringify(value)}\``;
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n+/g, " ");

/** The object fields a schema's rows come from: an object, a list or map of objects, or a union's described object options. */
function fieldsOf(s: Schema): { suffix: string; shape: Record<string, Schema> }[] {
  const def = s._zod.def;
  if (def.type === "object") return [{ suffix: "", shape: def.shape as Record<string, Schema> }];
  if (def.type === "array") return fieldsOf(unwrap(def.element as Schema).inner).map((f) => ({ ...f, suffix: `[]${f.suffix}` }));
  if (def.type === "record") return fieldsOf(unwrap(def.valueType as Schema).inner).map((f) => ({ ...f, suffix: `.<name>${f.suffix}` }));
  if (def.type === "union") {
    return (def.options as Schema[])
      .flatMap((o) => fieldsOf(unwrap(o).inner))
      .filter((f) => Object.values(f.shape).every((field) => unwrap(field).description));
  }
  return [];
}

function rows(path: string, schema: Schema, out: Row[]): void {
  for (const { suffix, shape } of fieldsOf(schema)) {
    for (const [key, field] of Object.entries(shape)) {
      const { inner, fallback, description, required } = unwrap(field);
      const full = `${path}${suffix}.${key}`;
      out.push({ key: full, type: typeOf(inner), default: formatDefault(inner, fallback, required), meaning: description ?? "" });
      rows(full, inner, out);
    }
  }
}

/** Keys without a `.describe()` text: the test that checks the page also wants this empty. */
export function undescribedKeys(): string[] {
  const out: Row[] = [];
  for (const [key, field] of Object.entries((routerConfigSchema as unknown as Schema)._zod.def.shape as Record<string, Schema>)) {
    const { inner, description } = unwrap(field);
    if (!description) out.push({ key, type: "", default: "", meaning: "" });
    rows(key, inner, out);
  }
  return out.filter((r) => !r.meaning).map((r) => r.key);
}

export function configReferenceMarkdown(): string {
  const md = [
    "# Configuration reference",
    "",
    "<!-- Generated by `npm run docs` from src/config/schema.ts (each key's `.describe()` text and default). Edit the schema, not this page: a test fails when it is stale. -->",
    "",
    "What every key of `router.yaml` means, its type and its default. `router.example.yaml` is a",
    "commented example; the README has minimal ones. In every string value `${VAR}` and",
    "`${VAR:-default}` are replaced from the environment. The file is reloaded when it changes (an",
    "invalid file is rejected with every problem logged, and the running config stays; requests in",
    "flight finish on the config they started with); `tracing` is read at start only.",
    "`npm run check-config -- --config router.yaml` validates a file (with `--probe` it also contacts",
    "every endpoint). Editors complete and check keys with the JSON Schema:",
    "`# yaml-language-server: $schema=./config/router.schema.json` on the first line.",
    "",
    "Durations are written `250ms`, `30s`, `5m`, `1h`, `1d` or as a number of seconds.",
    "`<name>` stands for a name you choose (a model's), `[]` for each entry of a list.",
  ];
  for (const [key, field] of Object.entries((routerConfigSchema as unknown as Schema)._zod.def.shape as Record<string, Schema>)) {
    const { inner, description } = unwrap(field);
    const out: Row[] = [];
    rows(key, inner, out);
    md.push("", `## ${key}`, "", description ?? "");
    if (GUIDES[key]) md.push("", `Explained in ${GUIDES[key]}.`);
    md.push("", "| key | type | default | meaning |", "| --- | --- | --- | --- |");
    for (const r of out) md.push(`| \`${r.key}\` | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.meaning)} |`);
  }
  return `${md.join("\n")}\n`;
}
