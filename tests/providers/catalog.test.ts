// The bundled catalog: what it ships, lookups by `provider/model`, the normalizer's fail-closed
// rules, and that the committed snapshot is exactly what tools/catalog/build.mjs produces.
import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  AssistantMessageBuilder,
  bundledCatalog,
  catalogModel,
  catalogModelFeatures,
  catalogModelLimits,
  normalizeModelsDev,
  parseModelRef,
} from "../../services/providers/index.js";

const root = join(import.meta.dirname, "..", "..");

describe("the bundled snapshot", () => {
  it("ships under 1 MiB with the providers the harness knows", () => {
    expect(statSync(join(root, "services", "providers", "catalog", "snapshot.json")).size).toBeLessThan(1024 * 1024);
    const catalog = bundledCatalog();
    expect(catalog.format).toBe(1);
    expect(catalog.source).toContain("models.dev");
    for (const id of ["openai", "anthropic", "openrouter", "deepseek", "google", "opencode-go"]) expect(catalog.providers[id]).toBeDefined();
    for (const id of ["openai", "anthropic", "openrouter"]) expect(Object.keys(catalog.providers[id]!.models).length).toBeGreaterThan(0);
    expect(catalog.providers["google"]).toMatchObject({ protocol: "chat", baseURL: "https://generativelanguage.googleapis.com/v1beta/openai" });
  });

  it("is up to date with tools/catalog/build.mjs", () => {
    const run = spawnSync(process.execPath, [join(root, "tools", "catalog", "build.mjs"), "--check"], { cwd: root, encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
  });
});

describe("lookups", () => {
  it("finds a model by provider/model with its limits and capabilities", () => {
    expect(parseModelRef("openrouter/anthropic/claude-3.5-sonnet")).toEqual({ providerId: "openrouter", modelId: "anthropic/claude-3.5-sonnet" });
    expect(parseModelRef("nope")).toBeUndefined();
    expect(parseModelRef("/x")).toBeUndefined();
    const model = catalogModel("anthropic/claude-3-5-haiku-20241022");
    expect(model).toMatchObject({ displayName: "Claude Haiku 3.5", protocol: "messages", pricing: { version: "v1", currency: "USD" } });
    expect(catalogModelLimits("anthropic/claude-3-5-haiku-20241022")).toEqual({ contextUnits: 200000, outputUnits: 8192 });
    expect(catalogModelFeatures("anthropic/claude-3-5-haiku-20241022")).toEqual({ tools: true, reasoning: false, images: true });
    expect(catalogModelFeatures("openai/gpt-5-nano")).toEqual({ tools: true, reasoning: true, images: true });
    expect(catalogModel("openai/gpt-5-nano")!.capabilities.reasoningEfforts).toEqual(["low", "medium", "high"]);
    expect(catalogModel("openai/gpt-5-nano")!.temperature).toBe(false);
    expect(catalogModel("openai/no-such")).toBeUndefined();
    expect(catalogModel("nowhere/x")).toBeUndefined();
    expect(catalogModel("toString/x")).toBeUndefined();
  });
});

describe("normalizeModelsDev", () => {
  const document = {
    compat: {
      id: "compat",
      name: "Compat",
      npm: "@ai-sdk/openai-compatible",
      api: "https://compat.example/v1",
      env: ["COMPAT_KEY", "not a name"],
      models: {
        plain: { id: "plain", name: "Plain", tool_call: true, modalities: { input: ["text", "image"], output: ["text"] }, limit: { context: 1000, output: 100 }, cost: { input: 0.0000001, output: 2 } },
        responsesShape: { id: "responsesShape", provider: { shape: "responses", npm: "@ai-sdk/anthropic" } },
        anthropicNpm: { id: "anthropicNpm", provider: { npm: "@ai-sdk/anthropic" } },
        unknownShape: { id: "unknownShape", provider: { shape: "websocket" } },
        unknownNpm: { id: "unknownNpm", provider: { npm: "@ai-sdk/something" } },
        alpha: { id: "alpha", status: "alpha" },
        retiredish: { id: "retiredish", status: "sunset" },
        mismatched: { id: "other" },
        "bad id": { id: "bad id" },
        imageOnly: { id: "imageOnly", modalities: { input: ["text"], output: ["image"] } },
      },
    },
    openai: { id: "openai", name: "OpenAI", npm: "@ai-sdk/openai", env: ["OPENAI_API_KEY"], models: {} },
    bedrock: { id: "bedrock", npm: "@ai-sdk/amazon-bedrock", models: { m: { id: "m" } } },
    "Bad Provider": { id: "Bad Provider", npm: "@ai-sdk/openai-compatible", api: "https://x", models: {} },
    noApi: { id: "noApi", npm: "@ai-sdk/openai-compatible", models: {} },
  };

  it("maps shape over model package over provider package, and drops what it cannot route", () => {
    const catalog = normalizeModelsDev(document, "test");
    expect(Object.keys(catalog.providers)).toEqual(["compat", "openai"]);
    expect(catalog.providers["openai"]).toMatchObject({ protocol: "responses", baseURL: "https://api.openai.com/v1" });
    const compat = catalog.providers["compat"]!;
    expect(compat.environment).toEqual(["COMPAT_KEY"]);
    expect(Object.keys(compat.models)).toEqual(["alpha", "anthropicNpm", "plain", "responsesShape"]);
    expect(compat.models["responsesShape"]!.protocol).toBe("responses");
    expect(compat.models["anthropicNpm"]!.protocol).toBe("messages");
    expect(compat.models["alpha"]!.status).toBe("alpha");
    expect(compat.models["plain"]).toMatchObject({
      protocol: "chat",
      capabilities: { input: ["text", "image"], output: ["text"], tools: true },
      limits: { contextUnits: 1000, outputUnits: 100 },
      pricing: { version: "v1", rates: { input: "0.0000001", output: "2" } },
    });
    // Unknown limits stay zero; unknown pricing is "unknown"; unknown tool support means tools on.
    expect(compat.models["alpha"]).toMatchObject({ limits: { contextUnits: 0, outputUnits: 0 }, pricing: { version: "unknown" }, capabilities: { tools: true } });
  });
});

describe("AssistantMessageBuilder", () => {
  it("folds deltas into ordered parts and attaches continuations", () => {
    const builder = new AssistantMessageBuilder();
    builder.add({ type: "reasoning.delta", text: "a" });
    builder.add({ type: "reasoning.delta", text: "b" });
    builder.add({ type: "reasoning.end", continuation: { protocol: "messages", providerId: "p", data: { signature: "s" } } });
    builder.add({ type: "reasoning.end", continuation: { protocol: "messages", providerId: "p", data: { redactedData: "r" } } });
    builder.add({ type: "text.delta", text: "x" });
    builder.add({ type: "text.delta", text: "y" });
    builder.add({ type: "refusal.delta", text: "no" });
    builder.add({ type: "tool_call", id: "c", name: "t", arguments: "{}" });
    builder.add({ type: "text.delta", text: "z" });
    builder.add({ type: "usage", promptTokens: 1, completionTokens: 1 });
    builder.add({ type: "finish", reason: "stop" });
    expect(builder.message()).toEqual({
      role: "assistant",
      content: [
        { type: "reasoning", text: "ab", continuation: { protocol: "messages", providerId: "p", data: { signature: "s" } } },
        { type: "reasoning", text: "", continuation: { protocol: "messages", providerId: "p", data: { redactedData: "r" } } },
        { type: "text", text: "xy" },
        { type: "refusal", text: "no" },
        { type: "tool_call", id: "c", name: "t", arguments: "{}" },
        { type: "text", text: "z" },
      ],
    });
  });
});
