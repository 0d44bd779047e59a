import { Writable } from "node:stream";

const LEVEL_COLOR: Record<string, string> = { trace: "90", debug: "36", info: "32", warn: "33", error: "31", fatal: "35" };
/** Fields every line has, shown in the line's head or not at all. */
const HEAD = new Set(["time", "level", "msg", "service"]);

/**
 * Turns pino's JSON lines into one readable line each, for people at a terminal:
 * `12:03:04.512 INFO  config reloaded  models=[demo] logLevel=debug`.
 * Lines that are not JSON pass through unchanged.
 */
export function prettyStream(out: NodeJS.WritableStream, color: boolean): Writable {
  return new Writable({
    write(chunk: Buffer | string, _enc, done) {
      let text = "";
      for (const line of String(chunk).split("\n")) if (line) text += prettyLine(line, color) + "\n";
      out.write(text);
      done();
    },
  });
}

export function prettyLine(line: string, color: boolean): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = typeof o.time === "string" ? o.time.slice(11, 23) : "";
  const level = String(o.level ?? "info");
  const tag = level.toUpperCase().padEnd(5);
  const head = color ? `\x1b[${LEVEL_COLOR[level] ?? "0"}m${tag}\x1b[0m` : tag;
  const fields = Object.entries(o)
    .filter(([k, v]) => !HEAD.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === "string" && /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v)}`)
    .join(" ");
  return `${time} ${head} ${String(o.msg ?? "")}${fields ? `  ${color ? `\x1b[90m${fields}\x1b[0m` : fields}` : ""}`;
}
