/** Reading the parts of input items, the same for every kind's request mapping. */
import type { Item } from "../wire/types.js";
import { untranslatable } from "./errors.js";

/** The param naming input item `i` in an error: replayed history has no index the client sent. */
export function itemParam(i: number, historyItems: number): string {
  return i < historyItems ? "previous_response_id" : `input[${i - historyItems}]`;
}

/** A string field of an item or part, or a 400 naming where it should have been. */
export function stringField(obj: Item, key: string, param: string): string {
  const value = obj[key];
  if (typeof value !== "string") throw untranslatable(`Missing or invalid '${key}': expected a string.`, param);
  return value;
}

/** An assistant message's parts as one text: text parts and refusals joined; anything else is not translatable. */
export function assistantText(parts: Item[], at: string): string {
  let text = "";
  for (let j = 0; j < parts.length; j++) {
    const part = parts[j]!;
    if (part.type === "output_text" || part.type === "input_text" || part.type === "text") text += stringField(part, "text", `${at}.content[${j}].text`);
    else if (part.type === "refusal") text += stringField(part, "refusal", `${at}.content[${j}].refusal`);
    else throw untranslatable(`Assistant message parts of type '${String(part.type)}' are not supported.`, `${at}.content[${j}].type`);
  }
  return text;
}
