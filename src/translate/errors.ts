/**
 * What the translation core throws when a request cannot be expressed for a chat backend
 * (an unsupported tool, input item, content part...). It names the offending parameter
 * and an OpenAI error code but knows nothing of HTTP: errors.ts `toApiError` turns it into
 * the 400 `invalid_request_error` the client sees.
 */
export class TranslationError extends Error {
  readonly param: string | null;
  readonly code: string | null;

  constructor(message: string, param: string | null = null, code: string | null = null) {
    super(message);
    this.name = "TranslationError";
    this.param = param;
    this.code = code;
  }
}

/** Shorthand used where a translation rejects its input. */
export const untranslatable = (message: string, param: string | null = null, code: string | null = null) => new TranslationError(message, param, code);

/**
 * The request names something the router would hold but does not: a `file_id` that is not one
 * of the router's files (unknown, another key's, deleted). Not the client's malformed request
 * but a missing object: errors.ts `toApiError` turns it into a 404, as OpenAI answers one.
 */
export class UnknownReference extends TranslationError {
  constructor(message: string, param: string | null = null) {
    super(message, param, null);
    this.name = "UnknownReference";
  }
}
