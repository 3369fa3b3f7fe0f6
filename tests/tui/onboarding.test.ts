// Connect provider against the real provider operations: the list with availability and
// credential source, an API key asked on the suspended terminal (connected, never rendered), a
// device login against a local OAuth server (URL and code shown, then connected), opening
// automatically at start when no model is usable, and `--onboarding` / Ctrl+X P on demand.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectProviderKey, getProvider } from "../../clients/index.js";
import { credentialHash } from "../../tools/test-model/index.js";
import { startOAuthServer, type OAuthServer } from "../providers/oauth-server.js";
import { gateProvider, keyedProvider } from "../providers/provider-harness.js";
import { KEY, tuiPerTest } from "./support.js";
import type { TerminalHooks } from "../../cli/tui/terminal.js";

describe("with a usable model (the keyless scripted provider)", () => {
  const { open } = tuiPerTest();

  it("does not open at start; Ctrl+X P opens the provider list with availability and source; Esc closes it", async () => {
    const tui = await open();
    await tui.waitFor(/test\/scripted · default agent/);
    expect(tui.frame()).not.toContain("Connect provider");
    await tui.press(KEY.ctrlX, "p");
    const frame = await tui.waitFor(/Connect provider[\s\S]*Scripted test model test · available · no credential needed/);
    expect(frame).toMatch(/Esc close/);
    await tui.press(KEY.enter);
    await tui.waitFor(/test needs no connection \(available · no credential needed\)/);
    await tui.press(KEY.escape);
    await tui.waitFor(/Ask anything/);
    expect(tui.frame()).not.toContain("Connect provider");
  });

  it("--onboarding opens it at start anyway", async () => {
    const tui = await open({ onboarding: true });
    await tui.waitFor(/Connect provider[\s\S]*Scripted test model/);
  });
});

describe("with no provider credentials", () => {
  let oauth: OAuthServer;
  beforeAll(async () => {
    oauth = await startOAuthServer();
  });
  afterAll(async () => {
    await oauth.close();
  });
  // `keyed` (API key, KEYED_API_KEY not set) and `gate` (device login) only: no model is usable.
  const { harness, open } = tuiPerTest({ config: (model) => ({ model: "keyed/m", providers: { keyed: keyedProvider(model), gate: gateProvider(model, oauth) } }) });

  it("opens Connect provider at start and keeps the connect hint until a provider is available", async () => {
    const tui = await open();
    const frame = await tui.waitFor(/Connect provider[\s\S]*Gate: Device code gate · missing credentials[\s\S]*Keyed test model: API key keyed · missing credentials/);
    expect(frame).toContain("No model is usable yet · Ctrl+X P connect a provider");
    expect(frame).toContain("default model · default agent"); // the catalog names no usable default
    await tui.press(KEY.escape);
    await tui.waitFor(/Ask anything/);
    expect(tui.frame()).toContain("No model is usable yet");
  });

  it("an API key is asked on the suspended terminal (the TUI hands it the prompt); connected; the key is never rendered; the model then answers", async () => {
    const h = harness();
    const key = "sk-tui-secret-value-42";
    const prompts: string[] = [];
    const terminal: TerminalHooks = {
      clear: () => undefined,
      line: async () => "",
      range: async () => "",
      osc52: () => undefined,
      mouse: () => undefined,
      readSecret: async (prompt) => (prompts.push(prompt), key),
    };
    const tui = await open({ terminal });
    await tui.waitFor(/Connect provider[\s\S]*Keyed test model: API key/);
    await tui.press(..."keyed");
    await tui.waitFor(/› Keyed test model: API key/);
    await tui.press(KEY.enter);
    await tui.waitFor(/keyed connected/);
    expect(prompts).toEqual(["API key for keyed (hidden; Enter connects, Ctrl-C cancels): "]);
    await tui.until(() => tui.controller.catalog?.models.some((model) => model.ref === "keyed/m" && model.availability.status === "available") === true);
    await tui.waitFor(/keyed\/m · default agent/);
    expect(tui.frame()).not.toContain("No model is usable yet");
    expect(await getProvider(h.api, "keyed")).toMatchObject({ availability: { status: "available" }, source: "stored", connection: { method: "api_key", status: "ready" } });
    await tui.submit("@say Connected answer.");
    await tui.waitFor(/Connected answer\.[\s\S]*keyed\/m · \d/);
    expect(h.model.requests.at(-1)?.credentialSha256).toBe(credentialHash(key));
    expect(tui.frames().some((frame) => frame.includes(key.slice(0, 12)))).toBe(false);
    expect(JSON.stringify(tui.controller.state)).not.toContain(key);
  });

  it("a device login shows the URL and code until the server approves, then reports connected", async () => {
    const h = harness();
    const tui = await open();
    await tui.waitFor(/› Gate: Device code/);
    await tui.press(KEY.enter);
    // Polls answer authorization_pending until the test approves.
    await tui.waitFor(new RegExp(`Open ${oauth.url}/activate and enter the code WDJB-MJHT`));
    oauth.polls.push("approve");
    await tui.waitFor(/gate connected/);
    expect(await getProvider(h.api, "gate")).toMatchObject({ availability: { status: "available" }, source: "stored", connection: { method: "oauth", status: "ready" } });
    expect(tui.frame()).not.toContain("WDJB-MJHT");
    await tui.press(KEY.ctrlX, "p");
    await tui.waitFor(/Gate: Device code gate · available · stored/);
  });

  it("a provider connected from another client is picked up: the connect hint goes, the header names its model", async () => {
    const h = harness();
    const tui = await open();
    await tui.waitFor(/Connect provider/);
    await tui.press(KEY.escape);
    await tui.waitFor(/No model is usable yet[\s\S]*Ask anything/);
    await connectProviderKey(h.api, "keyed", { apiKey: "sk-from-elsewhere" });
    // The TUI's catalog watch sees the new host revision and reads the catalog again.
    await tui.waitFor(/keyed\/m · default agent/);
    expect(tui.frame()).not.toContain("No model is usable yet");
  });

  it("Esc cancels a pending device login; nothing is connected", async () => {
    const h = harness();
    const tui = await open();
    await tui.waitFor(/› Gate: Device code/);
    await tui.press(KEY.enter);
    await tui.waitFor(/Connect gate[\s\S]*enter the code WDJB-MJHT[\s\S]*Esc cancel/);
    await tui.press(KEY.escape);
    const frame = await tui.waitFor(/gate login cancelled/);
    expect(frame).not.toContain("WDJB-MJHT");
    expect(await getProvider(h.api, "gate")).toMatchObject({ availability: { status: "unavailable", reason: "missing_credentials" } });
    expect((await getProvider(h.api, "gate")).connection).toBeUndefined();
  });
});
