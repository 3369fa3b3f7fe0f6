export { createFetchHandler, errorResponse, statusOf, PROTOCOL_VERSION, VERSION_HEADER } from "./handler.js";
export type { FetchHandler, FetchHandlerOptions, RequestContext } from "./handler.js";
export { LOOPBACK_HOSTS } from "./guard.js";
export type { GuardOptions } from "./guard.js";
export { MAX_REQUEST_BODY_BYTES } from "./request.js";
export { encodeSseMessage, MAX_SSE_EVENT_BYTES } from "./sse.js";
