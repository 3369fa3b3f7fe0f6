// The `codex` login module: `openai`'s ChatGPT sign-in (the device-code login of OpenAI's Codex
// CLI). The host asks the issuer for a user code, shows `<issuer>/codex/device` and the code,
// polls until the user approved (403/404 mean "not yet"), exchanges the authorization code it
// gets for tokens at `<issuer>/oauth/token` (PKCE verifier supplied by the issuer), and stores
// them with the ChatGPT account id from the ID token. Requests made with that login go to the
// ChatGPT Codex Responses deployment (`codexEndpoint`), never to a configured base URL.
//
// `ZE_HARNESS_CODEX_ISSUER` replaces the issuer (default https://auth.openai.com) and
// `ZE_HARNESS_CODEX_BASE_URL` the Codex deployment (default https://chatgpt.com/backend-api/codex),
// for tests against local stand-ins; both must be https, or http on a loopback address.
import type { Env } from "../../config/paths.js";
import { DEFAULT_INTERVAL_MS, type LoginMethod, type LoginOutcome, type StartedLogin } from "./flow.js";
import { pollDevice } from "./device.js";
import { LoginStepError, authorizationURL, jwtClaims, oauthEntry, postForm, requestJson, safeCode, tokenSet, type LoginContext } from "./oauth.js";

export const CODEX_CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann";
export const CODEX_METHOD_ID = "chatgpt";
export const CODEX_ISSUER_VARIABLE = "ZE_HARNESS_CODEX_ISSUER";
export const CODEX_BASE_URL_VARIABLE = "ZE_HARNESS_CODEX_BASE_URL";
const DEFAULT_ISSUER = "https://auth.openai.com";
const DEFAULT_CODEX_BASE_URL = "https://chatgpt.com/backend-api/codex";
/** The issuer's codes live 15 minutes. */
const CODE_LIFETIME_MS = 15 * 60 * 1000;

function configured(env: Env, variable: string, fallback: string): URL {
  const value = env[variable];
  if (value === undefined || value === "") return new URL(fallback);
  const url = authorizationURL(value);
  if (url === undefined) throw new LoginStepError(`${variable} must be an https URL (or http on a loopback address)`);
  return url;
}

const under = (base: URL, path: string): URL => new URL(`${base.href.replace(/\/+$/, "")}${path}`);

/** The issuer's base URL for this host. */
export const codexIssuer = (env: Env): URL => configured(env, CODEX_ISSUER_VARIABLE, DEFAULT_ISSUER);

/** The Responses endpoint of the ChatGPT Codex deployment, where requests of a ChatGPT login go. */
export function codexEndpoint(env: Env): string {
  return under(configured(env, CODEX_BASE_URL_VARIABLE, DEFAULT_CODEX_BASE_URL), "/responses").href;
}

/** The ChatGPT account of a token set (the ID token's claims, else the access token's). */
function accountIdOf(...tokens: (string | undefined)[]): string | undefined {
  for (const token of tokens) {
    if (token === undefined) continue;
    const claims = jwtClaims(token);
    if (claims === undefined) continue;
    const auth = claims["https://api.openai.com/auth"] as Record<string, unknown> | undefined;
    const organizations = claims["organizations"] as { id?: unknown }[] | undefined;
    const id = claims["chatgpt_account_id"] ?? auth?.["chatgpt_account_id"] ?? (Array.isArray(organizations) ? organizations[0]?.id : undefined);
    if (typeof id === "string" && /^[A-Za-z0-9_.:-]{1,128}$/.test(id)) return id;
  }
  return undefined;
}

const text = (value: unknown, max = 8192): value is string => typeof value === "string" && value.length > 0 && value.length <= max;

export function codexLoginMethod(env: Env): LoginMethod {
  return {
    id: CODEX_METHOD_ID,
    label: "ChatGPT account",
    async start(context: LoginContext, signal: AbortSignal): Promise<StartedLogin> {
      const issuer = codexIssuer(env);
      const json = (url: URL, body: unknown, cancel: AbortSignal) =>
        requestJson(context, url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }, cancel);
      const { status, body } = await json(under(issuer, "/api/accounts/deviceauth/usercode"), { client_id: CODEX_CLIENT_ID }, signal);
      const deviceAuthId = body?.["device_auth_id"];
      const userCode = body?.["user_code"] ?? body?.["usercode"];
      if (status !== 200 || !text(deviceAuthId) || !text(userCode, 256)) {
        const code = safeCode((body?.["error"] as Record<string, unknown> | undefined)?.["code"] ?? body?.["error"]);
        throw new LoginStepError(
          status === 403 || status === 404
            ? "OpenAI did not start a ChatGPT device login: enable device code authorization in your ChatGPT security settings"
            : `OpenAI did not start a ChatGPT device login${code !== undefined ? ` (${code})` : ""} (HTTP ${status})`,
        );
      }
      const interval = Number.parseInt(String(body!["interval"] ?? ""), 10);
      const started = context.now();
      const expiresAtValue = body!["expires_at"];
      const stated = typeof expiresAtValue === "string" ? Date.parse(expiresAtValue) : Number.NaN;
      const expiresAt = Number.isFinite(stated) ? stated : started + CODE_LIFETIME_MS;
      const tokenEndpoint = under(issuer, "/oauth/token");
      return {
        prompt: { verificationUrl: under(issuer, "/codex/device").href, userCode },
        expiresAt,
        complete: (cancel) =>
          pollDevice(context, {
            intervalMs: Number.isFinite(interval) && interval >= 0 ? interval * 1000 : DEFAULT_INTERVAL_MS,
            expiresAt,
            signal: cancel,
            poll: () => json(under(issuer, "/api/accounts/deviceauth/token"), { device_auth_id: deviceAuthId, user_code: userCode }, cancel),
            // The issuer answers 403 or 404 until the user approves.
            pending: (pollStatus, code) => pollStatus === 403 || pollStatus === 404 || code === "authorization_pending",
            exchange: async (approved): Promise<LoginOutcome> => {
              const code = approved?.["authorization_code"];
              const verifier = approved?.["code_verifier"];
              if (!text(code) || !text(verifier)) return { ok: false, reason: "error", message: "OpenAI answered the login without an authorization code" };
              const exchanged = await postForm(
                context,
                tokenEndpoint,
                { grant_type: "authorization_code", code, redirect_uri: under(issuer, "/deviceauth/callback").href, client_id: CODEX_CLIENT_ID, code_verifier: verifier },
                cancel,
              );
              const tokens = exchanged.status === 200 ? tokenSet(exchanged.body, context.now()) : undefined;
              if (tokens === undefined) return { ok: false, reason: "error", message: `OpenAI refused the token exchange (HTTP ${exchanged.status})` };
              const accountId = accountIdOf(tokens.idToken, tokens.access);
              return {
                ok: true,
                entry: oauthEntry(tokens, { tokenEndpoint: tokenEndpoint.href, clientId: CODEX_CLIENT_ID, method: CODEX_METHOD_ID, ...(accountId !== undefined ? { accountId } : {}) }),
              };
            },
          }),
      };
    },
  };
}

/** The account id a refreshed token set carries (the Codex login keeps it current). */
export const codexAccountId = accountIdOf;
