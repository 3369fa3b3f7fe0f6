// Credentials: configured keys, auth.json (0600, atomic, never overwriting a broken file),
// environment variables, the order between them, unavailability with a reason, and that no
// secret reaches a summary, a catalog snapshot or a thrown error.
import { chmodSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  authFileLocation,
  catalogSnapshot,
  loadCredentialSources,
  openModel,
  providerSummaries,
  providerSummary,
  readAuthFile,
  removeAuthEntry,
  resolveCredential,
  resolveProviders,
  setAuthEntry,
  type CredentialSources,
  type ProviderSet,
} from "../../services/providers/index.js";
import type { Config } from "../../services/config/types.js";
import { tempDir, type TempDir } from "./helpers.js";

const ENV_KEY = "sk-env-secret-value-1";
const STORED_KEY = "sk-stored-secret-value-2";
const CONFIG_KEY = "sk-config-secret-value-3";

function resolved(providers: Config["providers"]): ProviderSet {
  const result = resolveProviders(providers);
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.value;
}

let dir: TempDir;
let env: Record<string, string>;
beforeEach(() => {
  dir = tempDir();
  env = { HOME: join(dir.path, "home"), XDG_DATA_HOME: join(dir.path, "data") };
});
afterEach(() => dir.dispose());

const authPath = () => join(dir.path, "data", "ze-harness", "auth.json");
const modeOf = (path: string) => statSync(path).mode & 0o777;

describe("auth.json", () => {
  it("lives in the state directory and is created 0600 (directory 0700), written atomically", async () => {
    const location = authFileLocation(env);
    expect(location.path).toBe(authPath());
    expect(await setAuthEntry(location, "openai", { type: "api", key: STORED_KEY })).toEqual({ ok: true, value: undefined });
    expect(modeOf(authPath())).toBe(0o600);
    expect(modeOf(join(dir.path, "data", "ze-harness"))).toBe(0o700);
    expect(JSON.parse(readFileSync(authPath(), "utf8"))).toEqual({ openai: { type: "api", key: STORED_KEY } });
    // No temporary file is left behind.
    expect(readdirSync(join(dir.path, "data", "ze-harness"))).toEqual(["auth.json"]);

    const read = await readAuthFile(location);
    expect(read.ok && read.value.entries).toEqual({ openai: { type: "api", key: STORED_KEY } });
  });

  it("round-trips entries: replaces one, keeps the others (even unknown ones), restores 0600, removes", async () => {
    const location = authFileLocation(env);
    await setAuthEntry(location, "openai", { type: "api", key: "old" });
    writeFileSync(authPath(), JSON.stringify({ ...JSON.parse(readFileSync(authPath(), "utf8")), future: { type: "passkey", blob: 1 } }));
    chmodSync(authPath(), 0o644);
    await setAuthEntry(location, "openai", { type: "api", key: STORED_KEY });
    await setAuthEntry(location, "anthropic", { type: "oauth", access: "acc", refresh: "ref", expires: Date.now() + 3_600_000 });
    expect(modeOf(authPath())).toBe(0o600);
    const raw = JSON.parse(readFileSync(authPath(), "utf8"));
    expect(raw.openai).toEqual({ type: "api", key: STORED_KEY });
    expect(raw.future).toEqual({ type: "passkey", blob: 1 });
    expect(raw.anthropic.type).toBe("oauth");
    const read = await readAuthFile(location);
    expect(read.ok && Object.keys(read.value.entries).sort()).toEqual(["anthropic", "openai"]);

    await removeAuthEntry(location, "openai");
    expect(JSON.parse(readFileSync(authPath(), "utf8")).openai).toBeUndefined();
  });

  it("treats a missing file as no stored connections", async () => {
    const read = await readAuthFile(authFileLocation(env));
    expect(read).toMatchObject({ ok: true, value: { entries: {}, present: false } });
  });

  it("fails on a file that is not a JSON object and never overwrites it", async () => {
    const location = authFileLocation(env);
    await setAuthEntry(location, "openai", { type: "api", key: STORED_KEY });
    writeFileSync(authPath(), `["${STORED_KEY}"]`);
    const read = await readAuthFile(location);
    expect(read).toMatchObject({ ok: false, error: { _tag: "AuthFileInvalid" } });
    expect(JSON.stringify(read)).not.toContain(STORED_KEY);
    const write = await setAuthEntry(location, "anthropic", { type: "api", key: "k" });
    expect(write).toMatchObject({ ok: false, error: { _tag: "AuthFileInvalid" } });
    expect(readFileSync(authPath(), "utf8")).toBe(`["${STORED_KEY}"]`);
    writeFileSync(authPath(), "{not json");
    expect(await removeAuthEntry(location, "openai")).toMatchObject({ ok: false, error: { _tag: "AuthFileInvalid" } });
    expect(readFileSync(authPath(), "utf8")).toBe("{not json");
  });

  it("reads ZE_HARNESS_AUTH_CONTENT instead of the file, read-only", async () => {
    const location = authFileLocation({ ...env, ZE_HARNESS_AUTH_CONTENT: JSON.stringify({ openai: { type: "api", key: STORED_KEY } }) });
    const read = await readAuthFile(location);
    expect(read.ok && read.value.entries["openai"]).toEqual({ type: "api", key: STORED_KEY });
    expect(await setAuthEntry(location, "openai", { type: "api", key: "x" })).toMatchObject({ ok: false, error: { _tag: "AuthFileReadOnly" } });
    expect(existsSync(authPath())).toBe(false);
  });
});

describe("credential resolution", () => {
  const sources = async (extraEnv: Record<string, string> = {}): Promise<CredentialSources> => loadCredentialSources({ ...env, ...extraEnv });

  it("reads the definition's environment variables", async () => {
    const set = resolved({ openai: true });
    const result = resolveCredential(set.provider("openai")!, await sources({ OPENAI_API_KEY: ENV_KEY }));
    expect(result.ok && result.origin).toBe("environment");
    expect(result.ok && result.variable).toBe("OPENAI_API_KEY");
    expect(result.ok && result.secret!.reveal()).toBe(ENV_KEY);
    expect(JSON.stringify(result)).not.toContain(ENV_KEY);
  });

  it("uses a named entry's own environment list", async () => {
    const set = resolved({ "openai-work": { base: "openai", definition: { credentials: { environment: ["OPENAI_WORK_API_KEY"] } } } });
    const provider = set.provider("openai-work")!;
    expect(resolveCredential(provider, await sources({ OPENAI_API_KEY: ENV_KEY })).ok).toBe(false);
    const result = resolveCredential(provider, await sources({ OPENAI_WORK_API_KEY: ENV_KEY }));
    expect(result.ok && result.variable).toBe("OPENAI_WORK_API_KEY");
  });

  it("orders configured key, then stored connection, then environment", async () => {
    await setAuthEntry(authFileLocation(env), "openai", { type: "api", key: STORED_KEY });
    const withEnv = await sources({ OPENAI_API_KEY: ENV_KEY });
    const configured = resolved({ openai: { options: { apiKey: CONFIG_KEY } } }).provider("openai")!;
    const plain = resolved({ openai: true }).provider("openai")!;
    const first = resolveCredential(configured, withEnv);
    expect(first.ok && [first.origin, first.secret!.reveal()]).toEqual(["config", CONFIG_KEY]);
    const second = resolveCredential(plain, withEnv);
    expect(second.ok && [second.origin, second.secret!.reveal()]).toEqual(["stored", STORED_KEY]);
    await removeAuthEntry(authFileLocation(env), "openai");
    const third = resolveCredential(plain, await sources({ OPENAI_API_KEY: ENV_KEY }));
    expect(third.ok && third.origin).toBe("environment");
  });

  it("makes a provider without a credential unavailable with a clear reason — no substitute", async () => {
    const set = resolved({ openai: true, openrouter: true });
    const src = await sources({ OPENROUTER_API_KEY: ENV_KEY });
    const result = resolveCredential(set.provider("openai")!, src);
    expect(result).toMatchObject({ ok: false, reason: "missing_credentials" });
    expect(!result.ok && result.message).toContain("OPENAI_API_KEY");
    expect(!result.ok && result.message).toContain("`ze-harness provider connect openai`");
    expect(!result.ok && result.message).toContain("`ze-harness provider login openai`");
    // A provider without a login is not told to log in.
    const router = resolveCredential(resolved({ openrouter: true }).provider("openrouter")!, await sources({}));
    expect(!router.ok && router.message).not.toContain("provider login");
    const opened = openModel(set, "openai/gpt-4.1", src);
    expect(opened).toMatchObject({ ok: false, reason: "missing_credentials" });
    expect(openModel(set, "openai/no-such-model", src)).toMatchObject({ ok: false, reason: "unknown_model" });
    const routed = set.provider("openrouter")!.models[0]!;
    const ok = openModel(set, routed.ref, src);
    expect(ok.ok && ok.model).toBe(routed);
    expect(ok.ok && ok.credential!.reveal()).toBe(ENV_KEY);
  });

  it("needs no credential for authentication none", async () => {
    const set = resolved({ local: { definition: { baseURL: "http://127.0.0.1:9/v1", protocol: "chat", authentication: { kind: "none" }, models: { m: {} } } } });
    expect(resolveCredential(set.provider("local")!, await sources())).toEqual({ ok: true, origin: "none" });
    const opened = openModel(set, "local/m", await sources());
    expect(opened.ok && opened.credential).toBeUndefined();
  });

  it("reports an expired OAuth login as reconnect_required, unless another source has a key", async () => {
    await setAuthEntry(authFileLocation(env), "openai", { type: "oauth", access: "expired-access", refresh: "r", expires: Date.now() - 1000 });
    const provider = resolved({ openai: true }).provider("openai")!;
    expect(resolveCredential(provider, await sources())).toMatchObject({ ok: false, reason: "reconnect_required" });
    const fallback = resolveCredential(provider, await sources({ OPENAI_API_KEY: ENV_KEY }));
    expect(fallback.ok && fallback.origin).toBe("environment");
  });

  it("reports disabled providers as unavailable, and via providers by their holder's sign-in (never their own key)", async () => {
    const set = resolved({ openai: { enabled: false }, openrouter: { via: "tap" }, tap: true });
    expect(resolveCredential(set.provider("openai")!, await sources({ OPENAI_API_KEY: ENV_KEY }))).toMatchObject({ ok: false, reason: "disabled" });
    expect(resolveCredential(set.provider("openrouter")!, await sources({ OPENROUTER_API_KEY: ENV_KEY }))).toMatchObject({ ok: false, reason: "missing_credentials" });
    await setAuthEntry(authFileLocation(env), "tap", { type: "oauth", access: "tap-access-token", refresh: "r", expires: Date.now() + 3_600_000 });
    const routed = resolveCredential(set.provider("openrouter")!, await sources({ OPENROUTER_API_KEY: ENV_KEY }));
    expect(routed.ok && routed.origin).toBe("via");
    expect(routed.ok && routed.secret?.reveal()).toBe("tap-access-token");
    await setAuthEntry(authFileLocation(env), "tap", { type: "oauth", access: "tap-access-token", refresh: "r", expires: Date.now() - 1000 });
    expect(resolveCredential(set.provider("openrouter")!, await sources())).toMatchObject({ ok: false, reason: "reconnect_required", message: expect.stringContaining("your TAP sign-in expired") });
    expect(openModel(set, "openai/gpt-4.1", await sources())).toMatchObject({ ok: false, reason: "disabled" });
  });

  it("ignores an unreadable auth file for resolution (environment still works)", async () => {
    await setAuthEntry(authFileLocation(env), "openai", { type: "api", key: STORED_KEY });
    writeFileSync(authPath(), "[]");
    const src = await sources({ OPENAI_API_KEY: ENV_KEY });
    expect(src.auth).toMatchObject({ _tag: "AuthFileInvalid" });
    const result = resolveCredential(resolved({ openai: true }).provider("openai")!, src);
    expect(result.ok && result.origin).toBe("environment");
  });
});

describe("safe summaries and catalog snapshots", () => {
  it("summarizes availability and source without any secret", async () => {
    await setAuthEntry(authFileLocation(env), "anthropic", { type: "api", key: STORED_KEY });
    const set = resolved({
      openai: { options: { apiKey: CONFIG_KEY } },
      anthropic: true,
      openrouter: true,
      deepseek: { enabled: false },
      local: { definition: { baseURL: "http://127.0.0.1:9/v1", protocol: "chat", authentication: { kind: "none" }, models: { m: {} } } },
    });
    const src = await loadCredentialSources({ ...env, OPENROUTER_API_KEY: ENV_KEY });
    const summaries = providerSummaries(set, src);
    const byId = Object.fromEntries(summaries.map((summary) => [summary.id, summary]));
    expect(byId["openai"]).toMatchObject({ availability: { status: "available" }, source: "environment", methods: ["api_key", "oauth"], logins: [{ id: "chatgpt", label: "ChatGPT account" }] });
    expect(byId["anthropic"]).toMatchObject({ methods: ["api_key"], logins: [] });
    expect(byId["anthropic"]).toMatchObject({
      availability: { status: "available" },
      source: "stored",
      connection: { providerId: "anthropic", method: "api_key", status: "ready" },
    });
    expect(byId["openrouter"]).toMatchObject({ availability: { status: "available" }, source: "environment" });
    expect(byId["deepseek"]).toMatchObject({ availability: { status: "unavailable", reason: "disabled" } });
    expect(byId["local"]).toMatchObject({ availability: { status: "available" }, source: "none", methods: [] });
    const json = JSON.stringify(summaries);
    for (const secret of [ENV_KEY, STORED_KEY, CONFIG_KEY]) expect(json).not.toContain(secret);

    const missing = providerSummary(resolved({ openai: true }).provider("openai")!, await loadCredentialSources(env));
    expect(missing).toMatchObject({ availability: { status: "unavailable", reason: "missing_credentials" }, source: "none" });
  });

  it("builds a catalog snapshot with per-provider availability and the documented default", async () => {
    const set = resolved({ openai: true, anthropic: true, deepseek: { enabled: false } });
    const src = await loadCredentialSources({ ...env, ANTHROPIC_API_KEY: ENV_KEY });
    const snapshot = catalogSnapshot(set, src);
    expect(snapshot.providers.map((provider) => [provider.id, provider.availability.status])).toEqual([
      ["anthropic", "available"],
      ["deepseek", "unavailable"],
      ["openai", "unavailable"],
    ]);
    expect(snapshot.models.some((model) => model.providerId === "deepseek")).toBe(false);
    const refs = snapshot.models.map((model) => model.ref);
    expect(refs).toEqual([...refs].sort());
    // No configured default: the first available model in ref order.
    expect(snapshot.defaultModel).toBe(snapshot.models.find((model) => model.availability.status === "available")!.ref);
    expect(snapshot.defaultModel!.startsWith("anthropic/")).toBe(true);
    // A configured default counts only when available.
    expect(catalogSnapshot(set, src, { defaultModel: "openai/gpt-4.1" }).defaultModel).toBeUndefined();
    expect(catalogSnapshot(set, src, { defaultModel: "anthropic/claude-3-5-haiku-20241022" }).defaultModel).toBe("anthropic/claude-3-5-haiku-20241022");
    expect(JSON.stringify(snapshot)).not.toContain(ENV_KEY);
    // The revision is a content hash: stable for equal input, moved by a credential change.
    expect(catalogSnapshot(set, src).hostRevision).toBe(snapshot.hostRevision);
    const more = catalogSnapshot(set, await loadCredentialSources({ ...env, ANTHROPIC_API_KEY: ENV_KEY, OPENAI_API_KEY: ENV_KEY }));
    expect(more.hostRevision).not.toBe(snapshot.hostRevision);
  });
});
