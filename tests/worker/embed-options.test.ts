// WorkerHarnessHost's options compiled as the host does at wake (worker/host-options.ts), in Node:
// unknown provider ids fail the host by default and are left out and reported under
// `unknownProviders: 'report'`; a supplied models.dev catalog is used only when valid and not
// older than the bundled snapshot (else the snapshot, with the reason); a bad option is a typed
// refusal naming the option, never its value; and the standalone object's Worker variables,
// passed as options, compile to the configuration worker/config.ts reads from them.
import { describe, expect, it } from "vitest";
import { readWorkerConfig } from "../../worker/config.js";
import { compileHostSettings, settingsOfConfig, validateModelCatalog, ModelsDevSourceError } from "../../worker/host-options.js";
import { bundledCatalog } from "../../services/providers/catalog.js";

const custom = { definition: { baseURL: "http://127.0.0.1:9/v1", protocol: "chat", authentication: { kind: "none" }, models: { scripted: { displayName: "Scripted" } } } };
const published = Date.parse(bundledCatalog().builtAt!) + 1;
const document = {
  example: { id: "example", name: "Example", npm: "@ai-sdk/openai-compatible", api: "https://example.test/v1", env: ["EXAMPLE_API_KEY"], models: { m1: { id: "m1", name: "Model one" } } },
};

const compiled = (settings: Parameters<typeof compileHostSettings>[0]) => {
  const result = compileHostSettings(settings);
  if (!result.ok) throw new Error(`${result.tag}: ${result.message}`);
  return result.value;
};

describe("WorkerHarnessHost options", () => {
  it("fails on an unknown provider id by default, and leaves it out and reports it under 'report'", () => {
    const providers = { test: custom, "no-such": true, incomplete: { definition: { baseURL: "http://127.0.0.1:9/v1" } }, routed: { base: "openai" } } as const;
    const failed = compileHostSettings({ providers });
    expect(failed).toMatchObject({ ok: false, tag: "ProviderInvalid" });
    expect(compileHostSettings({ providers, unknownProviders: "fail" })).toEqual(failed);

    const reported = compiled({ providers, unknownProviders: "report" });
    expect(reported.rejectedProviders.map((rejected) => rejected.providerId)).toEqual(["no-such", "incomplete"]);
    for (const rejected of reported.rejectedProviders) expect(rejected.message).toContain(JSON.stringify(rejected.providerId));
    expect(reported.configured.providers.providers.map((provider) => provider.id)).toEqual(["routed", "test"]);
    // Only what compiled reaches the Turns' configuration.
    expect(Object.keys(reported.configured.config.providers!)).toEqual(["test", "routed"]);
    // Nothing left: the empty map is refused as on every host.
    expect(compileHostSettings({ providers: { "no-such": true }, unknownProviders: "report" })).toMatchObject({ ok: false, tag: "ProvidersEmpty" });
  });

  it("compiles against a supplied catalog published at or after the bundled snapshot, else the snapshot with the reason", async () => {
    const supplied = compiled({ providers: { example: true, openai: true }, unknownProviders: "report", model: "example/m1", modelCatalog: { document, publishedAt: published } });
    expect(supplied.catalog).toMatchObject({ source: "supplied", publishedAt: published });
    expect(supplied.catalog.diagnostic).toBeUndefined();
    // openai is in the bundled snapshot but not in the supplied catalog: the host compiled from the latter.
    expect(supplied.rejectedProviders.map((rejected) => rejected.providerId)).toEqual(["openai"]);
    expect(supplied.configured.providers.model("example/m1")).toMatchObject({ ref: "example/m1" });

    const stale = compiled({ providers: { example: true, openai: true }, unknownProviders: "report", modelCatalog: { document, publishedAt: published - 2 } });
    expect(stale.catalog.source).toBe("bundled");
    expect(stale.catalog.diagnostic).toContain("before the bundled snapshot");
    expect(stale.rejectedProviders.map((rejected) => rejected.providerId)).toEqual(["example"]);

    const invalid = compiled({ modelCatalog: { document: { nothing: { npm: "unknown-package" } }, publishedAt: published } });
    expect(invalid.catalog).toMatchObject({ source: "bundled", diagnostic: "the supplied model catalog was not used: modelCatalog.document lists no usable provider" });

    await expect(validateModelCatalog({ document, publishedAt: published })).resolves.toMatchObject({ providers: { example: { id: "example" } } });
    await expect(validateModelCatalog({ document: "not json", publishedAt: published })).rejects.toBeInstanceOf(ModelsDevSourceError);
    await expect(validateModelCatalog({ document, publishedAt: Number.NaN })).rejects.toMatchObject({ _tag: "ModelsDevSourceError" });
  });

  it("refuses a bad option naming it, never echoing its value", () => {
    const secret = "sk-should-never-echo";
    const refusals = [
      compileHostSettings({ permissions: [{ action: "shell", resource: "*", effect: secret }] as never }),
      compileHostSettings({ approvalTimeoutMs: 0 }),
      compileHostSettings({ model: `test/${secret}`, providers: { test: custom } as never }),
      compileHostSettings({ unknownProviders: secret as never }),
    ];
    expect(refusals.map((refusal) => (refusal.ok ? "ok" : refusal.tag))).toEqual(["ConfigInvalid", "ConfigInvalid", "ConfigInvalid", "ConfigInvalid"]);
    const messages = refusals.map((refusal) => (refusal.ok ? "" : refusal.message));
    expect(messages.slice(0, 4)).toEqual([
      expect.stringContaining("option permissions"),
      expect.stringContaining("option approvalTimeoutMs"),
      expect.stringContaining("option model"),
      expect.stringContaining("option unknownProviders"),
    ]);
    for (const message of messages) expect(message).not.toContain(secret);
  });

  it("drops a configured options.apiKey under credentialMode 'injected-only' (keys come only through the port)", () => {
    const providers = { test: { ...custom, options: { apiKey: "configured-key", timeout: 1000 } } } as never;
    const injected = compiled({ providers, credentialMode: "injected-only" });
    expect((injected.configured.config.providers as any).test.options).toEqual({ timeout: 1000 });
    expect(JSON.stringify(injected.configured)).not.toContain("configured-key");
    const ambient = compiled({ providers });
    expect((ambient.configured.config.providers as any).test.options).toEqual({ apiKey: "configured-key", timeout: 1000 });
  });

  it("compiles the standalone object's Worker variables, passed as options, to what worker/config.ts reads", () => {
    const read = readWorkerConfig({
      HARNESS_PROVIDERS: JSON.stringify({ test: custom }),
      HARNESS_MODEL: "test/scripted",
      HARNESS_PERMISSIONS: JSON.stringify([{ action: "shell", resource: "*", effect: "ask" }]),
      HARNESS_PERMISSION_CASE_SENSITIVE: "false",
      HARNESS_APPROVAL_TIMEOUT_MS: "5000",
      HARNESS_CODEMODE_ENABLED: "false",
    });
    if (!read.ok) throw new Error(read.message);
    const host = compiled(settingsOfConfig(read.value.config));
    expect(host.configured.config).toEqual(read.value.config);
    expect(host.configured.providers.providers.map((provider) => provider.id)).toEqual(read.value.providers.providers.map((provider) => provider.id));
    expect(host.rejectedProviders).toEqual([]);
    expect(host.catalog.source).toBe("bundled");
    const unlimited = readWorkerConfig({ HARNESS_APPROVAL_TIMEOUT_MS: "unlimited" });
    if (!unlimited.ok) throw new Error(unlimited.message);
    expect(compiled(settingsOfConfig(unlimited.value.config)).configured.config).toEqual(unlimited.value.config);
  });
});
