import type { ResponseSteerFailedEvent, ResponseSteerInput, ResponsesServerEvent } from "openai/resources/responses/responses";
import { ApiError, invalidRequest } from "../ops/errors.js";

/**
 * The messages the socket itself writes (everything else is a stream event the service
 * produced): OpenAI's WebSocket `error` event, typed by the openai package's
 * `ResponsesServerEvent.ResponseWsError`, and the lane tag on every event.
 */
export function errorEvent(err: ApiError, streamId: string | undefined): string {
  const event: ResponsesServerEvent.ResponseWsError = { type: "error", status: wsStatus(err), error: { type: err.type, code: err.code, message: err.message, param: err.param } };
  // What HTTP sends as headers (retry-after, x-ratelimit-*) rides in the event, as OpenAI's does.
  for (const _ in err.headers) {
    event.error.headers = err.headers;
    break;
  }
  if (streamId !== undefined) event.stream_id = streamId;
  return JSON.stringify(event);
}

/**
 * The `status` of an error frame: the HTTP status, except where OpenAI's socket says otherwise:
 * an unknown `previous_response_id` is 400 on the socket (Codex then resends the full history),
 * and an aborted request is the client's 400.
 */
function wsStatus(err: ApiError): number {
  if (err.status === 499 || err.code === "previous_response_not_found") return 400;
  return err.status;
}

/** Adds `"stream_id"` to a serialized event object without parsing it again. */
export function withStreamId(data: string, streamId: string | undefined): string {
  if (streamId === undefined) return data;
  const end = data.lastIndexOf("}");
  return `${data.slice(0, end)},"stream_id":${JSON.stringify(streamId)}}`;
}

/**
 * `response.steer` (queue input into a running response): the router's backends cannot take
 * input mid-response, so it is refused with the input handed back, as OpenAI does for a model
 * that does not support steering; the client sends it in its next `response.create`.
 */
export function steerFailed(event: Record<string, unknown>): string {
  const failed: ResponseSteerFailedEvent = {
    type: "response.steer.failed",
    sequence_number: 0,
    error: { type: "invalid_request_error", code: "steering_not_supported", message: "Steering is not supported by this router: send the input in the next response.create." },
    steer: { input: (event.input ?? "") as ResponseSteerInput, previous_response_id: typeof event.previous_response_id === "string" ? event.previous_response_id : "" },
  };
  return JSON.stringify(failed);
}

/** OpenAI's words, with the configured limit ("60 minutes" by default). */
export const connectionLimitReached = (limitMs: number) =>
  new ApiError(400, `Responses websocket connection limit reached (${spell(limitMs)}). Create a new websocket connection to continue.`, {
    type: "invalid_request_error",
    code: "websocket_connection_limit_reached",
  });

export const shuttingDown = () =>
  new ApiError(503, "The router is shutting down: open a new WebSocket connection and send the request again.", { type: "server_error", code: "server_shutting_down" });

export const invalidJson = () =>
  invalidRequest("We could not parse the JSON of your message: each WebSocket message must be one JSON object, such as a `response.create` event.", null, "invalid_json");

export const unknownEventType = (type: unknown) =>
  invalidRequest(
    typeof type === "string"
      ? `Invalid value: '${type.slice(0, 100)}'. Supported values are: 'response.create' and 'response.steer'.`
      : "Missing required parameter: 'type'. Each message must be an event object such as {\"type\": \"response.create\", ...}.",
    "type",
    typeof type === "string" ? "unknown_event_type" : "missing_required_parameter",
  );

export const backgroundUnsupported = () => invalidRequest("Background responses are not supported over WebSocket: send background requests with POST /v1/responses.", "background", "unsupported_parameter");

export const tooManyLanes = (max: number) =>
  new ApiError(429, `Too many responses in flight on this WebSocket (the limit is ${max} stream_id lanes): wait for one to finish or open another connection.`, {
    type: "invalid_request_error",
    code: "too_many_streams",
    param: "stream_id",
  });

export const laneQueueFull = (max: number) =>
  new ApiError(429, `Too many response.create events queued on this stream_id (the limit is ${max}): wait for the lane's responses to finish.`, {
    type: "invalid_request_error",
    code: "too_many_requests_queued",
    param: "stream_id",
  });

function spell(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000} minutes`;
  if (ms % 1000 === 0) return `${ms / 1000} seconds`;
  return `${ms} ms`;
}
