/**
 * A file's text, by its media type: text, Markdown, code and JSON as UTF-8, HTML through
 * node-html-parser (its text, with block elements on lines of their own; scripts and styles
 * left out) and PDF through pdfjs-dist's legacy build (the one for Node: no DOM, no worker
 * thread), page by page. What the router cannot read is refused at upload (`mimeOf` says
 * null), so a parse error here is a damaged file: `invalid_file`.
 */
import { extname } from "node:path";

/** Extensions file_search reads, and the media type each is read as. */
const BY_EXTENSION: Record<string, string> = {
  ".txt": "text/plain", ".text": "text/plain", ".log": "text/plain", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
  ".md": "text/markdown", ".markdown": "text/markdown", ".mdx": "text/markdown", ".rst": "text/x-rst", ".tex": "text/x-tex",
  ".json": "application/json", ".jsonl": "application/jsonl", ".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml", ".xml": "application/xml",
  ".html": "text/html", ".htm": "text/html",
  ".pdf": "application/pdf",
  ".c": "text/x-c", ".h": "text/x-c", ".cc": "text/x-c++", ".cpp": "text/x-c++", ".hpp": "text/x-c++", ".cs": "text/x-csharp",
  ".go": "text/x-golang", ".java": "text/x-java", ".kt": "text/x-kotlin", ".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript",
  ".ts": "application/typescript", ".tsx": "application/typescript", ".jsx": "text/javascript", ".py": "text/x-python", ".rb": "text/x-ruby",
  ".php": "text/x-php", ".rs": "text/x-rust", ".swift": "text/x-swift", ".scala": "text/x-scala", ".sh": "application/x-sh", ".bash": "application/x-sh",
  ".sql": "application/sql", ".css": "text/css", ".lua": "text/x-lua", ".r": "text/x-r", ".pl": "text/x-perl", ".proto": "text/plain", ".ini": "text/plain", ".cfg": "text/plain",
};

/** The media type a file is read as (its extension first, then a declared type file_search reads), or null when it cannot be read. */
export function mimeOf(filename: string, declared: string | undefined): string | null {
  const byName = BY_EXTENSION[extname(filename).toLowerCase()];
  if (byName) return byName;
  const type = (declared ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/pdf" || type === "text/html" || type === "application/json" || type.startsWith("text/")) return type;
  return null;
}

/** True when the file_search parser reads this media type. */
export function readable(mime: string): boolean {
  return Object.values(BY_EXTENSION).includes(mime) || mime.startsWith("text/");
}

export class ParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ParseError";
  }
}

/** The text of a file's bytes. */
export async function parseFile(bytes: Uint8Array, mime: string): Promise<string> {
  if (mime === "application/pdf") return pdfText(bytes);
  const text = decodeUtf8(bytes);
  if (mime === "text/html") return htmlText(text);
  return text;
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes).replace(/^\uFEFF/, "");
  } catch {
    throw new ParseError("The file is not valid UTF-8 text.");
  }
}

async function htmlText(html: string): Promise<string> {
  const { parse } = await import("node-html-parser");
  const root = parse(html, { blockTextElements: { pre: true, code: true } });
  for (const el of root.querySelectorAll("script, style, noscript, template")) el.remove();
  return root.structuredText.trim();
}

async function pdfText(bytes: Uint8Array): Promise<string> {
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  let doc;
  try {
    // pdf.js takes its buffer over: give it a copy, the caller's bytes stay the caller's.
    doc = await pdfjs.getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, isEvalSupported: false, verbosity: 0 }).promise;
  } catch (err) {
    throw new ParseError(`The PDF could not be read: ${(err as Error).message}`);
  }
  try {
    const pages: string[] = [];
    for (let p = 1; p <= doc.numPages; p++) {
      const page = await doc.getPage(p);
      const content = await page.getTextContent();
      let text = "";
      for (const item of content.items) {
        if (!("str" in item)) continue;
        text += item.str + (item.hasEOL ? "\n" : "");
      }
      pages.push(text.trim());
      page.cleanup();
    }
    return pages.filter(Boolean).join("\n\n");
  } finally {
    await doc.destroy();
  }
}
