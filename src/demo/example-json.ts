/**
 * An example value that satisfies a JSON Schema, for the demo backend's tool arguments and
 * structured answers (`text.format` json_schema, what `responses.parse` and the Agents SDKs'
 * output types send): enough of the schema language for what the SDKs generate from zod and
 * pydantic ($ref into $defs, anyOf with null, enums and consts, nested objects and arrays,
 * numeric and length bounds). Not a validator: a pattern it cannot read is left unmet.
 */
type Schema = Record<string, unknown>;

/** How deep a recursive schema is followed before an optional branch (null, []) ends it. */
const MAX_DEPTH = 8;
/** A recursion with no optional branch to end it (no finite value satisfies it) stops here, with null. */
const HARD_DEPTH = 4 * MAX_DEPTH;

export function exampleFor(schema: unknown): unknown {
  return example(asSchema(schema), asSchema(schema), 0);
}

function example(s: Schema, root: Schema, depth: number): unknown {
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if (typeof s.$ref === "string") {
    const target = resolveRef(s.$ref, root);
    return target && depth < HARD_DEPTH ? example(target, root, depth + 1) : null;
  }
  const options = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(options) && options.length > 0) {
    // Past the depth limit a nullable branch ends a recursive schema.
    const schemas = options.map(asSchema);
    const chosen = depth >= MAX_DEPTH ? (schemas.find((o) => o.type === "null") ?? schemas[0]!) : (schemas.find((o) => o.type !== "null") ?? schemas[0]!);
    return example({ ...withoutKeys(s, ["anyOf", "oneOf"]), ...chosen }, root, depth + 1);
  }
  if (Array.isArray(s.allOf) && s.allOf.length > 0) {
    let merged: Schema = withoutKeys(s, ["allOf"]);
    for (const part of s.allOf) merged = mergeObjects(merged, asSchema(part));
    return example(merged, root, depth + 1);
  }
  switch (typeOf(s)) {
    case "object":
      return objectExample(s, root, depth);
    case "array":
      return arrayExample(s, root, depth);
    case "integer":
      return numberExample(s, true);
    case "number":
      return numberExample(s, false);
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return stringExample(s);
  }
}

function objectExample(s: Schema, root: Schema, depth: number): Record<string, unknown> {
  const props = (s.properties ?? {}) as Record<string, unknown>;
  const required = Array.isArray(s.required) ? (s.required as string[]) : Object.keys(props);
  const out: Record<string, unknown> = {};
  // Every property when the schema lists them all as required (strict mode), else the required ones.
  for (const name of required) out[name] = example(asSchema(props[name]), root, depth + 1);
  return out;
}

function arrayExample(s: Schema, root: Schema, depth: number): unknown[] {
  const min = typeof s.minItems === "number" ? s.minItems : 0;
  const max = typeof s.maxItems === "number" ? s.maxItems : Infinity;
  if (s.items === undefined || max === 0 || (depth >= MAX_DEPTH && min === 0)) return [];
  const one = example(asSchema(s.items), root, depth + 1);
  return Array.from({ length: Math.max(1, Math.min(min, max)) }, () => one);
}

function numberExample(s: Schema, integer: boolean): number {
  let n = 1;
  if (typeof s.minimum === "number") n = Math.max(n, s.minimum);
  if (typeof s.exclusiveMinimum === "number") n = Math.max(n, s.exclusiveMinimum + (integer ? 1 : 0.5));
  if (typeof s.maximum === "number") n = Math.min(n, s.maximum);
  if (typeof s.exclusiveMaximum === "number" && n >= s.exclusiveMaximum) n = s.exclusiveMaximum - (integer ? 1 : 0.5);
  return integer ? Math.ceil(n) : n;
}

const FORMATS: Record<string, string> = {
  "date-time": "2026-01-01T00:00:00Z",
  date: "2026-01-01",
  time: "00:00:00",
  email: "demo@example.com",
  uri: "https://example.com/",
  uuid: "00000000-0000-4000-8000-000000000000",
};

function stringExample(s: Schema): string {
  let text = (typeof s.format === "string" && FORMATS[s.format]) || "demo";
  if (typeof s.minLength === "number" && text.length < s.minLength) text = text.padEnd(s.minLength, "o");
  if (typeof s.maxLength === "number" && text.length > s.maxLength) text = text.slice(0, s.maxLength);
  return text;
}

/** The schema's type; the first that is not null when it lists several; guessed from its keywords when absent. */
function typeOf(s: Schema): string | undefined {
  if (typeof s.type === "string") return s.type;
  if (Array.isArray(s.type)) return (s.type.find((t) => t !== "null") ?? s.type[0]) as string | undefined;
  if (s.properties !== undefined) return "object";
  if (s.items !== undefined) return "array";
  return undefined;
}

/** `#/$defs/Name`, `#/definitions/Name` or `#` (the root itself) within the root schema. */
function resolveRef(ref: string, root: Schema): Schema | null {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return null;
  let at: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (at === null || typeof at !== "object") return null;
    at = (at as Schema)[key];
  }
  return at !== null && typeof at === "object" ? (at as Schema) : null;
}

function mergeObjects(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a, ...b };
  if (a.properties || b.properties) out.properties = { ...(a.properties as Schema), ...(b.properties as Schema) };
  if (Array.isArray(a.required) || Array.isArray(b.required)) out.required = [...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])])];
  return out;
}

function withoutKeys(s: Schema, keys: string[]): Schema {
  const out = { ...s };
  for (const k of keys) delete out[k];
  return out;
}

function asSchema(v: unknown): Schema {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Schema) : {};
}
