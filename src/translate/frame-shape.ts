/**
 * A token stream's text chunks, read without JSON.parse. Each chunk of a chat completion stream
 * (or each text delta of a Messages stream) is the same JSON text as the one before it except
 * for the text it carries: `{"id":"chatcmpl-1",...,"delta":{"content":"Hello"},...}`. Parsing
 * every one builds five objects to read one string; it was a fifth of a translated stream's
 * CPU per chunk.
 *
 * A `FrameShape` learns, from a frame that was parsed and whose only news is one string field
 * (the caller decides which frames qualify), the text before that string's value and the text
 * after it. A later frame with exactly that text before and after, and one JSON string between
 * them, is the learned frame with another value: `read` returns the value. Anything else
 * (another field changed, a `created` that ticked, a finish reason, usage) does not match and is
 * parsed as before, and a frame that qualifies is learned again.
 */
export class FrameShape {
  private head = "";
  private tail = "";
  private readonly keyText: string;

  /** `key`: the string field whose value varies (`content`, `text`). */
  constructor(key: string) {
    this.keyText = `${JSON.stringify(key)}:`;
  }

  /**
   * Learns `data`'s shape: `value` is what parsing it gave for the field. Only when the key occurs
   * once and the value is written as JSON.stringify writes it (then the text after it is known);
   * otherwise the shape is forgotten (false).
   */
  learn(data: string, value: string): boolean {
    this.head = "";
    this.tail = "";
    const key = data.indexOf(this.keyText);
    if (key === -1 || data.indexOf(this.keyText, key + 1) !== -1) return false;
    let at = key + this.keyText.length;
    while (data.charCodeAt(at) === 32) at++;
    const literal = JSON.stringify(value);
    if (!data.startsWith(literal, at)) return false;
    this.head = data.slice(0, at);
    this.tail = data.slice(at + literal.length);
    return true;
  }

  /** The field's value when `data` is the learned frame with only that value changed, else undefined. */
  read(data: string): string | undefined {
    const head = this.head;
    const tail = this.tail;
    const end = data.length - tail.length;
    // Compared as slices: startsWith with a search string that is not a constant was ~10x slower.
    if (head === "" || end < head.length + 2 || data.slice(0, head.length) !== head || data.slice(end) !== tail) return undefined;
    if (data.charCodeAt(head.length) !== 34 || data.charCodeAt(end - 1) !== 34) return undefined;
    const inner = data.slice(head.length + 1, end - 1);
    // No quote and no escape inside: the characters are the value.
    if (inner.indexOf('"') === -1 && inner.indexOf("\\") === -1) return inner;
    // Escapes: one JSON string literal, decoded (anything else between head and tail is not one).
    try {
      const v: unknown = JSON.parse(data.slice(head.length, end));
      return typeof v === "string" ? v : undefined;
    } catch {
      return undefined;
    }
  }
}
