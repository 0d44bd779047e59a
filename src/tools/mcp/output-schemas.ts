/**
 * The output schemas of a session's tools, as compiled validators. A pooled session lists its
 * server's tools for every response, and each listing is new objects: a validator is compiled
 * again only when a tool's schema text changed. The compiler (Ajv) keeps whatever it compiles for
 * as long as it lives: a session's holds one validator per schema text it was given, not one
 * per listing.
 */
export type JsonValidator = (input: unknown) => { valid: boolean; errorMessage?: string };

interface Compiled {
  text: string;
  check: JsonValidator;
}

export class OutputSchemas {
  /** By tool name: the latest listing's, and what the one before compiled (reused when the text is the same). */
  private current = new Map<string, Compiled>();
  private previous = new Map<string, Compiled>();

  constructor(private readonly compile: (schema: Record<string, unknown>) => JsonValidator) {}

  /** A new listing begins: what the last one compiled is kept for reuse until it is over. */
  clear(): void {
    this.previous = this.current;
    this.current = new Map();
  }

  /** A listed tool: its schema compiled, or the earlier validator of the same text. A tool without one has none. */
  add(name: string, schema: unknown): void {
    if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return;
    const text = JSON.stringify(schema);
    const earlier = this.previous.get(name) ?? this.current.get(name);
    this.current.set(name, earlier !== undefined && earlier.text === text ? earlier : { text, check: this.compile(schema as Record<string, unknown>) });
  }

  get(name: string): JsonValidator | undefined {
    return this.current.get(name)?.check;
  }
}
