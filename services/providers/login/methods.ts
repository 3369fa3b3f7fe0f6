// Which host-held login methods a provider offers: its `login` (definition, or the built-in
// preset's) as the safe contract view (`ProviderLoginMethod`: id, label, notice) and as the
// runnable method the login manager starts.
import type { ProviderLoginMethod } from "../../../generated/client/types.gen.js";
import type { Env } from "../../config/paths.js";
import type { ResolvedProvider } from "../registry.js";
import { CODEX_METHOD_ID, codexLoginMethod } from "./codex.js";
import { DEVICE_METHOD_ID, deviceLoginMethod } from "./device.js";
import type { LoginMethod } from "./flow.js";

/** The safe descriptions of a provider's login methods (none for a disabled or `via` provider). */
export function loginMethodsOf(provider: ResolvedProvider): ProviderLoginMethod[] {
  const login = provider.login;
  if (login === undefined || provider.via !== undefined) return [];
  if ("device" in login) {
    const notice = login.device.notice;
    return [{ id: DEVICE_METHOD_ID, label: "Device code", ...(notice !== undefined ? { notice: { text: notice.text, links: notice.links.map((link) => ({ label: link.label, url: link.url })) } } : {}) }];
  }
  return [{ id: CODEX_METHOD_ID, label: "ChatGPT account" }];
}

/** The runnable login methods of a provider, in the order `loginMethodsOf` lists them. */
export function runnableLoginMethods(provider: ResolvedProvider, env: Env): LoginMethod[] {
  const login = provider.login;
  if (login === undefined || provider.via !== undefined) return [];
  if ("device" in login) return [deviceLoginMethod(provider.baseURL, login)];
  return [codexLoginMethod(env)];
}
