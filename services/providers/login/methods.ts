// Which host-held login methods a provider offers: its `login` (definition, or the built-in
// preset's) as the safe contract view (`ProviderLoginMethod`: id, label, notice) and as the
// runnable method the login manager starts.
import type { ProviderLoginMethod } from "../../../generated/client/types.gen.js";
import type { Env } from "../../config/paths.js";
import type { ResolvedProvider } from "../registry.js";
import { CODEX_METHOD_ID, codexLoginMethod } from "./codex.js";
import { DEVICE_METHOD_ID, deviceLoginMethod } from "./device.js";
import type { LoginMethod } from "./flow.js";
import { TAP_DISCOVERY_PATH, TAP_METHOD_ID, TAP_METHOD_LABEL, TAP_NOTICE, tapIssuer } from "../tap.js";

const tapNotice = () => ({ text: TAP_NOTICE.text, links: TAP_NOTICE.links.map((link) => ({ label: link.label, url: link.url })) });

/** The safe descriptions of a provider's login methods (none for a disabled or `via` provider). */
export function loginMethodsOf(provider: ResolvedProvider): ProviderLoginMethod[] {
  const login = provider.login;
  if (login === undefined || provider.via !== undefined) return [];
  if ("device" in login) {
    const notice = login.device.notice;
    return [{ id: DEVICE_METHOD_ID, label: "Device code", ...(notice !== undefined ? { notice: { text: notice.text, links: notice.links.map((link) => ({ label: link.label, url: link.url })) } } : {}) }];
  }
  if (login.module === "tap") return [{ id: TAP_METHOD_ID, label: TAP_METHOD_LABEL, notice: tapNotice() }];
  return [{ id: CODEX_METHOD_ID, label: "ChatGPT account" }];
}

/** The runnable login methods of a provider, in the order `loginMethodsOf` lists them. */
export function runnableLoginMethods(provider: ResolvedProvider, env: Env): LoginMethod[] {
  const login = provider.login;
  if (login === undefined || provider.via !== undefined) return [];
  if ("device" in login) return [deviceLoginMethod(provider.baseURL, login)];
  if (login.module === "tap") {
    // The TAP sign-in: the device flow of the TAP issuer (ZE_HARNESS_TAP_ISSUER, else the gateway's origin).
    const device = { device: { discoveryURL: TAP_DISCOVERY_PATH, notice: tapNotice() } };
    return [deviceLoginMethod(tapIssuer(env, provider.baseURL), device, { id: TAP_METHOD_ID, label: TAP_METHOD_LABEL })];
  }
  return [codexLoginMethod(env)];
}
