/**
 * What src/responses/files/ holds:
 * `input_file` parts given by `file_url`, fetched for a chat or anthropic backend before the
 * request is translated (`fetch-files.ts`: only URLs `files.fetch.allow` names, never a
 * loopback/private address unless a pattern names that host; size and time bounded); the pure core
 * maps the contents
 */
/**
 * `input_file` parts given by `file_url`, for the backends the router translates for (chat,
 * anthropic): the router fetches the URL before the request is translated and hands the
 * contents to the pure core (translate/chat/files.ts, translate/anthropic/content.ts) by URL,
 * so what a backend may read from the network stays the router's `files.fetch` rules on every
 * kind. OpenAI endpoints fetch their own: a model served only by `kind: openai` endpoints is
 * left alone.
 *
 * The router is the one that connects, so what it may fetch is the operator's choice:
 * `files.fetch.allow` URL patterns (none by default), and never a loopback, private or
 * link-local address (the router's own network) unless a pattern names that host literally.
 * A hostname is checked on the addresses it resolves to, at connect time.
 */
import { lookup as dnsLookup } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { Agent, request } from "undici";
import type { RouterConfig } from "../../config/load.js";
import { ApiError, invalidRequest } from "../../ops/errors.js";
import { fallbackSteps } from "../../runtime/models.js";
import type { FetchedFile } from "../../translate/index.js";
import type { Item } from "../../wire/types.js";
import type { Plan } from "../create/plan.js";

interface FileRef {
  url: string;
  param: string;
}

/** Where an item's parts are: a message's `content`, a tool output's `output`. */
const PART_LISTS = ["content", "output"] as const;

/** A part whose `file_url` the router must fetch: an input_file without `file_data`. */
function isFileUrlPart(part: Item | undefined): part is Item & { file_url: string } {
  return part?.type === "input_file" && typeof part.file_url === "string" && part.file_url !== "" && !part.file_data;
}

/** The `file_url`s of message parts and tool outputs without `file_data`, with the param that names each. */
function fileUrls(plan: Plan): FileRef[] {
  const refs: FileRef[] = [];
  const scan = (items: Item[], at: (i: number) => string) => {
    for (let i = 0; i < items.length; i++) {
      for (const key of PART_LISTS) {
        const parts = items[i]![key];
        if (!Array.isArray(parts)) continue;
        (parts as Item[]).forEach((part, j) => {
          if (isFileUrlPart(part)) refs.push({ url: part.file_url, param: `${at(i)}.${key}[${j}].file_url` });
        });
      }
    }
  };
  scan(plan.history, () => "previous_response_id");
  scan(plan.input, (i) => `input[${i}]`);
  return refs;
}

/** Whether the plan has a `file_url` part not fetched yet: a look that allocates nothing. */
function hasFileUrlsToFetch(plan: Plan): boolean {
  return plan.files === undefined && (anyFileUrl(plan.history) || anyFileUrl(plan.input));
}

function anyFileUrl(items: Item[]): boolean {
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    for (let k = 0; k < PART_LISTS.length; k++) {
      const parts = item[PART_LISTS[k]!];
      if (!Array.isArray(parts)) continue;
      for (let j = 0; j < parts.length; j++) if (isFileUrlPart(parts[j] as Item)) return true;
    }
  }
  return false;
}

/** Whether any endpoint that may serve the plan (its pool, then its fallbacks) is one the router translates for. */
function mayServeTranslated(plan: Plan): boolean {
  const kinds = new Map(plan.cfg.endpoints.map((e) => [e.name, e.kind]));
  return fallbackSteps(plan.cfg, plan.model, plan.modelCfg, plan.targets).some((s) => s.targets.some((t) => kinds.get(t.endpoint) !== "openai"));
}

/** What a plan carries whose `file_url`s no endpoint that may serve it would read (every one `kind: openai`): a later call (connect after the service's) does not look again. */
const NO_FILES: Readonly<Record<string, FetchedFile>> = Object.freeze(Object.create(null));

/**
 * The plan with the contents of its `file_url`s (when a chat or anthropic backend may serve it).
 * A plan with none to fetch (almost every request) is returned as it is, not through a promise.
 */
export function fetchFileUrls(plan: Plan, signal: AbortSignal): Plan | Promise<Plan> {
  return hasFileUrlsToFetch(plan) ? fetchAll(plan, signal) : plan;
}

async function fetchAll(plan: Plan, signal: AbortSignal): Promise<Plan> {
  if (!mayServeTranslated(plan)) return { ...plan, files: NO_FILES };
  const refs = fileUrls(plan);
  const files: Record<string, FetchedFile> = Object.create(null);
  for (const ref of refs) {
    if (!(ref.url in files)) files[ref.url] = await fetchFile(plan.cfg, ref, signal);
  }
  return { ...plan, files };
}

type FetchSettings = RouterConfig["files"]["fetch"];

async function fetchFile(cfg: RouterConfig, ref: FileRef, signal: AbortSignal): Promise<FetchedFile> {
  const settings: FetchSettings = cfg.files?.fetch ?? { allow: [], max_bytes: 20 * 1024 * 1024, timeout: 10_000 };
  let url: URL;
  try {
    url = new URL(ref.url);
  } catch {
    throw invalidRequest(`Invalid 'file_url': '${short(ref.url)}' is not a URL.`, ref.param, "invalid_value");
  }
  const patterns = settings.allow.filter((p) => globMatch(p, ref.url));
  if ((url.protocol !== "http:" && url.protocol !== "https:") || patterns.length === 0) {
    throw invalidRequest(
      `The file_url '${short(ref.url)}' cannot be fetched: the router fetches files only from the URLs its configuration allows (files.fetch.allow).`,
      ref.param,
      "invalid_value",
    );
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const privateAllowed = patterns.some((p) => patternHost(p) === host.toLowerCase());
  if (!privateAllowed && isIP(host) && isPrivate(host)) throw refused(ref);
  const dispatcher = new Agent({ connect: { lookup: privateAllowed ? undefined : publicOnlyLookup, timeout: settings.timeout } });
  const timeout = AbortSignal.timeout(settings.timeout);
  try {
    // No redirect is followed (undici follows none without its redirect interceptor): a 3xx is an answer like any non-2xx.
    const res = await request(url, { method: "GET", dispatcher, signal: AbortSignal.any([signal, timeout]), headersTimeout: settings.timeout, bodyTimeout: settings.timeout });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      await res.body.dump();
      throw invalidRequest(`The file_url '${short(ref.url)}' could not be fetched: the server answered ${res.statusCode}.`, ref.param, "invalid_value");
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > settings.max_bytes) {
        res.body.destroy();
        throw invalidRequest(`The file at file_url '${short(ref.url)}' is larger than ${settings.max_bytes} bytes (files.fetch.max_bytes).`, ref.param, "file_too_large");
      }
      chunks.push(chunk as Buffer);
    }
    const type = String(res.headers["content-type"] ?? "application/octet-stream").split(";")[0]!.trim() || "application/octet-stream";
    const name = decodeURIComponent(url.pathname.split("/").pop() ?? "") || undefined;
    return { file_data: `data:${type};base64,${Buffer.concat(chunks).toString("base64")}`, filename: name };
  } catch (err) {
    if (signal.aborted) throw err;
    if (err instanceof ApiError) throw err;
    if ((err as { code?: string }).code === PRIVATE_CODE) throw refused(ref);
    throw invalidRequest(`The file_url '${short(ref.url)}' could not be fetched: ${timeout.aborted ? "it timed out" : "the server could not be reached"}.`, ref.param, "invalid_value");
  } finally {
    void dispatcher.close();
  }
}

const PRIVATE_CODE = "ERR_ROUTER_PRIVATE_ADDRESS";

const refused = (ref: FileRef) =>
  invalidRequest(
    `The file_url '${short(ref.url)}' points to a loopback or private address, which the router does not fetch from unless files.fetch.allow names that host.`,
    ref.param,
    "invalid_value",
  );

/** Resolves like dns.lookup, but fails for loopback, private and link-local addresses. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, "", 0);
    const list = addresses as unknown as { address: string; family: number }[];
    const bad = list.find((a) => isPrivate(a.address));
    if (bad || list.length === 0) {
      const e = Object.assign(new Error(`refusing to connect to ${hostname}: a private address`), { code: PRIVATE_CODE });
      return callback(e, "", 0);
    }
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
};

const PRIVATE = new BlockList();
for (const [net, bits] of [["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12], ["192.168.0.0", 16], ["224.0.0.0", 4], ["240.0.0.0", 4]] as const) {
  PRIVATE.addSubnet(net, bits, "ipv4");
}
for (const [net, bits] of [["::", 127], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8]] as const) PRIVATE.addSubnet(net, bits, "ipv6");

export function isPrivate(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, "ipv4");
  if (family !== 6) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? PRIVATE.check(mapped[1]!, "ipv4") : PRIVATE.check(address, "ipv6");
}

/** `*` matches any run of characters; everything else literally. */
export function globMatch(pattern: string, text: string): boolean {
  const re = new RegExp(`^${pattern.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`, "i");
  return re.test(text);
}

/** The literal host a pattern names, or null when its host has a wildcard. */
function patternHost(pattern: string): string | null {
  const m = /^[a-z*]+:\/\/(\[[^\]]*\]|[^/:]*)/i.exec(pattern);
  const host = m?.[1]?.replace(/^\[|\]$/g, "").toLowerCase();
  return host && !host.includes("*") ? host : null;
}

const short = (s: string) => (s.length > 200 ? `${s.slice(0, 197)}...` : s);
