// Wire bounds a client checks before it sends, so a user hears which input is too big instead
// of the server's generic body-size refusal (the same constants the server enforces).
export { MAX_REQUEST_BODY_BYTES } from "../services/contract/body.js";
