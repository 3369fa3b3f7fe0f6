// The standard OAuth 2.0 device authorization grant (RFC 8628) for providers configured with
// `login: { device: { discoveryURL, notice? } }`. The discovery document (a path resolved against
// the provider base URL, or an absolute URL) is authorization-server metadata (RFC 8414):
// `device_authorization_endpoint` and `token_endpoint` (relative values resolve against the
// document's URL), optionally `client_id` and `scope` for the requests. Then: request a device
// code, show `verification_uri` and `user_code`, and poll the token endpoint every `interval`
// seconds (default 5; `slow_down` adds 5 s; `authorization_pending` keeps polling) until tokens,
// `access_denied` (denied), `expired_token` or the code's `expires_in` (expired).
import type { LoginDefinition } from "../definition.js";
import { DEFAULT_INTERVAL_MS, SLOW_DOWN_MS, type LoginMethod, type LoginOutcome, type StartedLogin } from "./flow.js";
import { LoginStepError, authorizationURL, oauthEntry, postForm, requestJson, safeCode, tokenSet, type LoginContext } from "./oauth.js";

export const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
export const DEVICE_METHOD_ID = "device";
/** The longest wait between polls after network failures. */
const MAX_BACKOFF_MS = 60_000;

/** The discovery URL of a device login: a path against the provider base URL, or an absolute http(s) URL. */
export function resolveDiscoveryURL(baseURL: string, discoveryURL: string): URL | undefined {
  return authorizationURL(discoveryURL, baseURL.endsWith("/") ? baseURL : `${baseURL}/`);
}

const text = (value: unknown, max = 2048): value is string => typeof value === "string" && value.length > 0 && value.length <= max;

interface Descriptor {
  readonly deviceEndpoint: URL;
  readonly tokenEndpoint: URL;
  readonly clientId?: string;
  readonly scope?: string;
}

async function discover(context: LoginContext, url: URL, signal: AbortSignal): Promise<Descriptor> {
  const { status, body } = await requestJson(context, url, { method: "GET" }, signal);
  if (status !== 200 || body === undefined) throw new LoginStepError(`the login descriptor at ${url.origin}${url.pathname} could not be read (HTTP ${status})`);
  const device = text(body["device_authorization_endpoint"]) ? authorizationURL(body["device_authorization_endpoint"], url.href) : undefined;
  const token = text(body["token_endpoint"]) ? authorizationURL(body["token_endpoint"], url.href) : undefined;
  if (device === undefined || token === undefined) {
    throw new LoginStepError("the login descriptor names no usable device_authorization_endpoint and token_endpoint (https, or http on loopback)");
  }
  return {
    deviceEndpoint: device,
    tokenEndpoint: token,
    ...(text(body["client_id"], 512) ? { clientId: body["client_id"] } : {}),
    ...(text(body["scope"], 1024) ? { scope: body["scope"] } : {}),
  };
}

const seconds = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : typeof value === "string" && /^\d+$/.test(value) ? Number(value) : undefined;

/** Polls a device-style token endpoint under RFC 8628's rules; `exchange` turns a 200 body into the outcome. */
export async function pollDevice(
  context: LoginContext,
  options: {
    readonly intervalMs: number;
    readonly expiresAt: number;
    readonly signal: AbortSignal;
    /** One poll: the status and body of the token request. */
    readonly poll: () => Promise<{ status: number; body: Record<string, unknown> | undefined }>;
    /** Is this failed poll "keep waiting"? (RFC 8628: `authorization_pending`.) */
    readonly pending?: (status: number, code: string | undefined) => boolean;
    readonly exchange: (body: Record<string, unknown> | undefined) => Promise<LoginOutcome>;
  },
): Promise<LoginOutcome> {
  let interval = options.intervalMs;
  const pending = options.pending ?? ((_status, code) => code === "authorization_pending");
  for (;;) {
    if (context.now() >= options.expiresAt) return { ok: false, reason: "expired", message: "the code expired before the login was approved" };
    await context.sleep(interval, options.signal);
    if (context.now() >= options.expiresAt) return { ok: false, reason: "expired", message: "the code expired before the login was approved" };
    let answer: { status: number; body: Record<string, unknown> | undefined };
    try {
      answer = await options.poll();
    } catch (error) {
      if (options.signal.aborted) throw options.signal.reason;
      // A network failure while waiting is not the user's answer: keep polling until expiry,
      // backing off (RFC 8628 §3.5) so an unreachable server is not hammered.
      if (error instanceof LoginStepError) {
        interval = Math.min(Math.max(interval * 2, 1000), MAX_BACKOFF_MS);
        continue;
      }
      throw error;
    }
    if (answer.status === 200) return options.exchange(answer.body);
    const code = safeCode(answer.body?.["error"]);
    if (pending(answer.status, code)) continue;
    if (code === "slow_down") {
      interval += SLOW_DOWN_MS;
      continue;
    }
    if (code === "access_denied") return { ok: false, reason: "denied", message: "the login was denied" };
    if (code === "expired_token") return { ok: false, reason: "expired", message: "the code expired before the login was approved" };
    return { ok: false, reason: "error", message: `the provider refused the login${code !== undefined ? ` (${code})` : ""} (HTTP ${answer.status})` };
  }
}

/** The device login of a provider whose definition declares `login.device`. */
export function deviceLoginMethod(
  providerBaseURL: string,
  login: Extract<LoginDefinition, { device: unknown }>,
  identity: { readonly id: string; readonly label: string } = { id: DEVICE_METHOD_ID, label: "Device code" },
): LoginMethod {
  return {
    id: identity.id,
    label: identity.label,
    ...(login.device.notice !== undefined ? { notice: login.device.notice } : {}),
    async start(context, signal): Promise<StartedLogin> {
      const url = resolveDiscoveryURL(providerBaseURL, login.device.discoveryURL);
      if (url === undefined) throw new LoginStepError("the login discoveryURL is not usable (https, or http on loopback)");
      const descriptor = await discover(context, url, signal);
      const { status, body } = await postForm(context, descriptor.deviceEndpoint, { client_id: descriptor.clientId, scope: descriptor.scope }, signal);
      const deviceCode = body?.["device_code"];
      const userCode = body?.["user_code"];
      const verification = text(body?.["verification_uri"]) ? authorizationURL(body["verification_uri"] as string) : undefined;
      if (status !== 200 || !text(deviceCode, 8192) || !text(userCode, 256) || verification === undefined) {
        const code = safeCode(body?.["error"]);
        throw new LoginStepError(`the provider did not start a device login${code !== undefined ? ` (${code})` : ""} (HTTP ${status})`);
      }
      const started = context.now();
      const expiresIn = seconds(body!["expires_in"]);
      const expiresAt = expiresIn !== undefined ? started + expiresIn * 1000 : Number.POSITIVE_INFINITY;
      const interval = seconds(body!["interval"]);
      const tokenEndpoint = descriptor.tokenEndpoint;
      return {
        prompt: { verificationUrl: verification.href, userCode },
        expiresAt,
        complete: (cancel) =>
          pollDevice(context, {
            intervalMs: interval !== undefined ? interval * 1000 : DEFAULT_INTERVAL_MS,
            expiresAt,
            signal: cancel,
            poll: () => postForm(context, tokenEndpoint, { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: descriptor.clientId }, cancel),
            exchange: async (tokenBody) => {
              const tokens = tokenSet(tokenBody, context.now());
              if (tokens === undefined) return { ok: false, reason: "error", message: "the provider answered the login without a usable access token" };
              return {
                ok: true,
                entry: oauthEntry(tokens, { tokenEndpoint: tokenEndpoint.href, method: identity.id, ...(descriptor.clientId !== undefined ? { clientId: descriptor.clientId } : {}) }),
              };
            },
          }),
      };
    },
  };
}
