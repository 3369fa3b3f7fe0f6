// The openai SDK client both OpenAI-wire adapters (Chat Completions, Responses) use: no
// retries, no logging, no ambient OPENAI_* settings — every request goes through `wireFetch`,
// which applies the resolved endpoint, headers, authentication and the attempt's bounds.
import OpenAI from "openai";
import type { ModelRequest } from "../events.js";
import { SDK_TIMEOUT_MS, registerSdkErrors, wireFetch, type Attempt } from "../wire.js";

registerSdkErrors(OpenAI);

export function openaiClient(request: ModelRequest, attempt: Attempt): OpenAI {
  const { model } = request;
  return new OpenAI({
    apiKey: "unused",
    baseURL: new URL(model.endpoint).origin,
    organization: null,
    project: null,
    webhookSecret: null,
    maxRetries: 0,
    timeout: SDK_TIMEOUT_MS,
    logLevel: "off",
    fetch: wireFetch(attempt, {
      endpoint: model.endpoint,
      headers: model.headers,
      authentication: model.authentication,
      ...(request.credential !== undefined ? { credential: request.credential } : {}),
    }),
  });
}
