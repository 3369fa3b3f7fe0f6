// Connect provider (Ctrl+X P, Ctrl+Alt+P, --onboarding, and at start when no model is usable):
// the server's providers with their availability and credential source; a device login (its
// URL and code shown until the login settles) or an API key typed on the real terminal while Ink
// is suspended (no echo, never in the UI state, never kept after the request). After a connection the catalog is read again. Through
// the generated client only: providers, startProviderLogin, getProviderLogin, connectProviderKey.
import { sdk, unwrap, type SafeProviderSummary } from "../../../clients/index.js";
import type { Controller, PickerSpec } from "./controller.js";
import { loadCatalog } from "./models.js";

/** `available · stored`, `missing credentials`, …: what the picker shows of a provider. */
export function providerState(provider: SafeProviderSummary): string {
  if (provider.availability.status !== "available") return provider.availability.reason.replace(/_/g, " ");
  const source = provider.source === "via" ? `via ${provider.via ?? "another provider"}` : provider.source === "none" ? "no credential needed" : provider.source;
  return `available · ${source}`;
}

export function providerPicker(controller: Controller): PickerSpec {
  return {
    title: "Connect provider",
    hint: "↑/↓ move · Enter connect · Ctrl+R refresh · Esc close",
    load: async () => {
      const { providers } = await unwrap(sdk.providers({ client: controller.backend.api.client }));
      return providers.flatMap((provider) => {
        const detail = `${provider.id} · ${providerState(provider)}`;
        const logins = provider.logins.map((login) => ({ id: `${provider.id}\u0000login\u0000${login.id}`, label: `${provider.displayName}: ${login.label}`, detail }));
        const key = provider.methods.includes("api_key") ? [{ id: `${provider.id}\u0000key`, label: `${provider.displayName}: API key`, detail }] : [];
        // A provider with nothing to connect (a keyless local model) is listed for its state.
        return logins.length + key.length > 0 ? [...logins, ...key] : [{ id: `${provider.id}\u0000none`, label: provider.displayName, detail }];
      });
    },
    choose: async (item) => {
      const [providerId, kind, methodId] = item.id.split("\u0000") as [string, string, string | undefined];
      if (kind === "none") return controller.info(`${providerId} needs no connection (${item.detail?.split(" · ").slice(1).join(" · ")})`);
      controller.closeOverlay();
      if (kind === "key") return promptKey(controller, providerId);
      await deviceLogin(controller, providerId, methodId);
    },
  };
}

async function connected(controller: Controller, providerId: string): Promise<void> {
  controller.info(`${providerId} connected`);
  try {
    await loadCatalog(controller); // the new models, the header's default
  } catch (error) {
    controller.error(error);
  }
}

async function deviceLogin(controller: Controller, providerId: string, methodId: string | undefined): Promise<void> {
  const client = controller.backend.api.client;
  let login = await unwrap(sdk.startProviderLogin({ client, path: { providerId }, body: methodId !== undefined ? { methodId } : {} }));
  while (login.status === "pending") {
    const current = controller.state.overlay;
    // Shown until the login settles, unless another overlay took its place.
    if (current === undefined || (current.kind === "login" && current.loginId === login.loginId)) {
      controller.update({ overlay: { kind: "login", providerId, loginId: login.loginId, url: login.prompt.verificationUrl, code: login.prompt.userCode } });
    }
    login = await unwrap(sdk.getProviderLogin({ client, path: { providerId, loginId: login.loginId }, query: { waitMs: "5000" } }));
  }
  const overlay = controller.state.overlay;
  if (overlay?.kind === "login" && overlay.loginId === login.loginId) controller.closeOverlay();
  if (login.status === "failed" && login.reason === "cancelled") return controller.info(`${providerId} login cancelled`);
  if (login.status === "failed") throw new Error(`${providerId} login failed: ${login.message}`);
  await connected(controller, providerId);
}

/** Esc on a pending device login: the host stops polling and the login settles as cancelled. */
export async function cancelLogin(controller: Controller, providerId: string, loginId: string): Promise<void> {
  controller.closeOverlay();
  await unwrap(sdk.cancelProviderLogin({ client: controller.backend.api.client, path: { providerId, loginId } }));
}

/** The TUI suspends; the terminal asks for the key without echo; then the TUI resumes and connects. */
async function promptKey(controller: Controller, providerId: string): Promise<void> {
  const terminal = controller.terminal;
  if (terminal === undefined) throw new Error(`an API key is typed on a terminal: run \`ze-harness provider connect ${providerId}\``);
  const apiKey = await terminal.readSecret(`API key for ${providerId} (hidden; Enter connects, Ctrl-C cancels): `);
  if (apiKey === undefined) return controller.info(`${providerId}: no key entered`);
  await connectKey(controller, providerId, apiKey.trim());
}

/** Connects `providerId` with `apiKey` (typed on the suspended terminal). */
export async function connectKey(controller: Controller, providerId: string, apiKey: string): Promise<void> {
  if (apiKey === "") throw new Error("an API key is needed");
  await unwrap(sdk.connectProviderKey({ client: controller.backend.api.client, path: { providerId }, body: { apiKey } }));
  await connected(controller, providerId);
}
