/**
 * What src/responses/conversations/ holds:
 * the Conversations API (`conversations.ts`) and the append of a finished turn to its conversation
 * (`turn.ts`)
 */
import type { Conversation, ConversationDeletedResource } from "openai/resources/conversations/conversations";
import type { ConversationItem, ConversationItemList } from "openai/resources/conversations/items";
import { invalidRequest, notFound } from "../../ops/errors.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { StoredConversation } from "../../store/types.js";
import { normalizeInput } from "../../translate/index.js";
import type { Item, JsonObject } from "../../wire/types.js";
import { checkInclude as checkIncludeValues, includedView } from "../items/include.js";
import { inputItemView, listPage, type ListQuery } from "../items/input-items.js";
import { loadConversation, uniqueIds, withIds } from "../create/plan.js";
import { resolveReferences, storedItemLookup } from "../create/references.js";
import { callStore } from "../create/store-access.js";
import { checkConversationId, checkItem, checkMetadata, invalidType } from "../create/validate.js";

/** OpenAI accepts at most this many items per create call. */
const MAX_ITEMS = 20;

/** What `include` may ask for when listing items (the Conversations API's list). */
const INCLUDABLE = new Set([
  "web_search_call.action.sources",
  "code_interpreter_call.outputs",
  "computer_call_output.output.image_url",
  "file_search_call.results",
  "message.input_image.image_url",
  "message.output_text.logprobs",
  "reasoning.encrypted_content",
]);

/**
 * The Conversations API: a conversation is a list of items owned by the API key that
 * created it (another key gets 404, exactly as for an id that does not exist).
 * `POST /v1/responses` with `conversation` reads and extends the same list.
 */
export class ConversationsService {
  constructor(private readonly rt: Runtime) {}

  private get store() {
    return this.rt.stores.conversations;
  }

  async create(body: unknown, owner: string | null): Promise<Conversation> {
    // No body at all is an empty create; a JSON body must be an object (`null` included).
    const b = bodyObject(body === undefined ? {} : body);
    const metadata = readMetadata(b.metadata, false);
    const items = b.items == null ? [] : await this.newItems(b.items, "items", [], owner);
    const record: StoredConversation = {
      conversation: { id: this.rt.ids("conv"), object: "conversation", created_at: Math.floor(Date.now() / 1000), metadata },
      owner,
      endpoint: null,
    };
    await callStore(() => this.store.create(record, items));
    return record.conversation;
  }

  async retrieve(id: string, owner: string | null): Promise<Conversation> {
    return (await this.load(id, owner)).conversation;
  }

  async update(id: string, body: unknown, owner: string | null): Promise<Conversation> {
    const b = bodyObject(body);
    if (!("metadata" in b)) throw invalidRequest("Missing required parameter: 'metadata'.", "metadata", "missing_required_parameter");
    const metadata = readMetadata(b.metadata, true);
    await this.load(id, owner);
    const updated = await callStore(() => this.store.update(id, metadata));
    if (!updated) throw notFoundConversation(id);
    return updated.conversation;
  }

  async remove(id: string, owner: string | null): Promise<ConversationDeletedResource> {
    await this.load(id, owner);
    await callStore(() => this.store.delete(id));
    return { id, object: "conversation.deleted", deleted: true };
  }

  async addItems(id: string, body: unknown, owner: string | null, include: string[]): Promise<ConversationItemList> {
    const b = bodyObject(body);
    if (b.items === undefined) throw invalidRequest("Missing required parameter: 'items'.", "items", "missing_required_parameter");
    checkInclude(include);
    await this.load(id, owner);
    const existing = (await callStore(() => this.store.items(id))) ?? [];
    const items = await this.newItems(b.items, "items", existing, owner);
    if (!(await callStore(() => this.store.append(id, items)))) throw notFoundConversation(id);
    const data = items.map((i) => view(i, include));
    return { object: "list", data, first_id: data[0]?.id ?? "", last_id: data.at(-1)?.id ?? "", has_more: false } as ConversationItemList;
  }

  async listItems(id: string, owner: string | null, query: ListQuery & { include: string[] }): Promise<ConversationItemList> {
    checkInclude(query.include);
    await this.load(id, owner);
    const items = (await callStore(() => this.store.items(id))) ?? [];
    const page = listPage(items, query, (after) => `No item with id '${after}' in conversation '${id}'.`);
    return { ...page, data: (page.data as unknown as Item[]).map((i) => view(i, query.include)) };
  }

  async getItem(id: string, itemId: string, owner: string | null, include: string[]): Promise<ConversationItem> {
    checkInclude(include);
    await this.load(id, owner);
    const item = ((await callStore(() => this.store.items(id))) ?? []).find((i) => i.id === itemId);
    if (!item) throw itemNotFound(itemId);
    return view(item, include);
  }

  /** Deletes one item and returns the conversation, as OpenAI does. */
  async deleteItem(id: string, itemId: string, owner: string | null): Promise<Conversation> {
    const rec = await this.load(id, owner);
    if (!(await callStore(() => this.store.deleteItem(id, itemId)))) throw itemNotFound(itemId);
    return rec.conversation;
  }

  private load(id: string, owner: string | null): Promise<StoredConversation> {
    checkConversationId(id, "conversation_id");
    return loadConversation(this.store, id, owner);
  }

  /** Validates client items and stores them as OpenAI returns them: ids, content parts, message status. */
  private async newItems(raw: unknown, param: string, existing: Item[], owner: string | null): Promise<Item[]> {
    if (!Array.isArray(raw)) throw invalidType(param, "an array", raw);
    if (raw.length > MAX_ITEMS) {
      throw invalidRequest(
        `Invalid '${param}': array too long. Expected an array with maximum length ${MAX_ITEMS}, but got an array with length ${raw.length} instead.`,
        param,
        "array_above_max_length",
      );
    }
    raw.forEach((item, i) => checkItem(item, `${param}[${i}]`));
    const lookup = storedItemLookup({ responses: this.rt.stores.responses, conversations: this.store, tracing: this.rt.tracing }, owner);
    const items = await resolveReferences(withIds(normalizeInput(raw as Item[]), this.rt.ids), existing, lookup);
    // An item re-sent with an id the conversation already holds is kept under a fresh id.
    return uniqueIds(items.map(inputItemView), new Set(existing.map((i) => i.id)), this.rt.ids);
  }
}

const notFoundConversation = (id: string) => notFound(`Conversation with id '${id}' not found.`);
const itemNotFound = (id: string) => notFound(`Item with id '${id}' not found.`);

function bodyObject(body: unknown): JsonObject {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw invalidRequest("The request body must be a JSON object.", null, "invalid_type");
  return body as JsonObject;
}

function readMetadata(value: unknown, required: boolean): Record<string, string> {
  if (value == null) {
    if (required && value === undefined) throw invalidRequest("Missing required parameter: 'metadata'.", "metadata", "missing_required_parameter");
    return {};
  }
  if (typeof value !== "object" || Array.isArray(value)) throw invalidType("metadata", "an object", value);
  checkMetadata(value as JsonObject);
  return value as Record<string, string>;
}

function checkInclude(include: string[]): void {
  checkIncludeValues(include, INCLUDABLE);
}

/** An item as the client sees it: the parts OpenAI returns only on request (encrypted reasoning, logprobs, ...) only when asked for. */
function view(item: Item, include: string[]): ConversationItem {
  return includedView(item, include) as unknown as ConversationItem;
}
