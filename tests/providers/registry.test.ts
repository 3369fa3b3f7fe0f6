// Provider resolution from the config's `providers` map: defaults, the empty map, catalog
// providers, custom definitions, named entries with `base`, `enabled: false`, options and the
// base-URL rules.
import { describe, expect, it } from "vitest";
import {
  DEFAULT_PROVIDER_IDS,
  joinEndpoint,
  resolveProviders,
  validateBaseURL,
  type ProviderSet,
  type ProviderSetupError,
} from "../../services/providers/index.js";
import type { Config } from "../../services/config/types.js";

function resolved(providers: Config["providers"]): ProviderSet {
  const result = resolveProviders(providers);
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.value;
}

function failed(providers: Config["providers"]): ProviderSetupError {
  const result = resolveProviders(providers);
  if (result.ok) throw new Error("expected a setup error");
  return result.error;
}

describe("defaults and the empty map", () => {
  it("enables OpenAI, OpenCode Go and OpenRouter when there is no providers map", () => {
    const set = resolved(undefined);
    expect(set.providers.map((provider) => provider.id)).toEqual(["openai", "opencode-go", "openrouter"]);
    expect(DEFAULT_PROVIDER_IDS).toEqual(["openai", "opencode-go", "openrouter"]);
    const openai = set.provider("openai")!;
    expect(openai.enabled).toBe(true);
    expect(openai.environment).toEqual(["OPENAI_API_KEY"]);
    const gpt = openai.models.find((model) => model.id === "gpt-4.1")!;
    expect(gpt).toMatchObject({
      ref: "openai/gpt-4.1",
      protocol: "responses",
      endpoint: "https://api.openai.com/v1/responses",
      authentication: { kind: "bearer" },
    });
    expect(gpt.limits.contextUnits).toBeGreaterThan(0);
    const routed = set.provider("openrouter")!.models[0]!;
    expect(routed.protocol).toBe("chat");
    expect(routed.endpoint).toBe("https://openrouter.ai/api/v1/chat/completions");
    expect(set.provider("opencode-go")!.baseURL).toBe("https://opencode.ai/zen/go/v1");
    expect(set.provider("anthropic")).toBeUndefined();
  });

  it("fails startup on an empty map instead of restoring the defaults", () => {
    expect(failed({})).toMatchObject({ _tag: "ProvidersEmpty", path: "/providers" });
  });

  it("enables only the listed providers", () => {
    const set = resolved({ anthropic: true });
    expect(set.providers.map((provider) => provider.id)).toEqual(["anthropic"]);
    const claude = set.provider("anthropic")!.models.find((model) => model.id === "claude-3-5-haiku-20241022")!;
    expect(claude).toMatchObject({
      protocol: "messages",
      endpoint: "https://api.anthropic.com/v1/messages",
      authentication: { kind: "header", name: "x-api-key" },
      limits: { contextUnits: 200000, outputUnits: 8192 },
    });
    expect(set.model("anthropic/claude-3-5-haiku-20241022")).toBe(claude);
    expect(set.model("openai/gpt-4.1")).toBeUndefined();
  });

  it("accepts an empty object for a catalog provider (deepseek example)", () => {
    const set = resolved({ deepseek: {} });
    expect(set.provider("deepseek")!.models.length).toBeGreaterThan(0);
    expect(set.provider("deepseek")!.models[0]!.endpoint).toBe("https://api.deepseek.com/chat/completions");
  });

  it("addresses model IDs that contain a slash by splitting the ref at the first slash", () => {
    const set = resolved({ openrouter: true });
    const model = set.provider("openrouter")!.models.find((candidate) => candidate.id.includes("/"))!;
    expect(set.model(`openrouter/${model.id}`)).toBe(model);
  });

  it("rejects a provider the catalog does not know and that has no definition", () => {
    expect(failed({ nowhere: true })).toMatchObject({ _tag: "ProviderInvalid", providerId: "nowhere", path: "/providers/nowhere" });
  });

  it("rejects an invalid provider ID", () => {
    expect(failed({ "Bad Id": true })).toMatchObject({ _tag: "ProviderInvalid" });
  });
});

describe("custom definitions", () => {
  const ollama = {
    ollama: {
      definition: {
        displayName: "Local Ollama",
        baseURL: "http://127.0.0.1:11434/v1",
        protocol: "chat",
        authentication: { kind: "none" },
        models: {
          gemma4: {
            upstreamId: "gemma4:latest",
            capabilities: { input: ["text"], output: ["text"], tools: true },
            limits: { contextUnits: 131072, outputUnits: 8192 },
          },
        },
      },
    },
  };

  it("compiles the reference's Ollama example", () => {
    const set = resolved(ollama);
    const provider = set.provider("ollama")!;
    expect(provider.displayName).toBe("Local Ollama");
    expect(provider.authentication).toEqual({ kind: "none" });
    expect(set.model("ollama/gemma4")).toMatchObject({
      upstreamId: "gemma4:latest",
      protocol: "chat",
      endpoint: "http://127.0.0.1:11434/v1/chat/completions",
      authentication: { kind: "none" },
      capabilities: { input: ["text"], output: ["text"], tools: true },
      limits: { contextUnits: 131072, outputUnits: 8192 },
      pricing: { version: "unknown" },
    });
  });

  it("defaults a model without metadata to text in/out with tools, and zero limits", () => {
    const set = resolved({ local: { definition: { baseURL: "http://127.0.0.1:9/v1", protocol: "responses", models: { x: {} } } } });
    expect(set.model("local/x")).toMatchObject({
      upstreamId: "x",
      capabilities: { input: ["text"], output: ["text"], tools: true },
      limits: { contextUnits: 0, outputUnits: 0 },
      authentication: { kind: "bearer" },
    });
  });

  it("gives a header rule to every model and keeps credential environment names", () => {
    const set = resolved({
      proxy: {
        definition: {
          baseURL: "https://proxy.example/api/",
          protocol: "messages",
          authentication: { kind: "header", name: "api-key" },
          credentials: { environment: ["PROXY_KEY"] },
          routes: { messages: "/v2/messages/" },
          headers: { "x-client": "ze" },
          models: { m: {}, n: { protocol: "chat" } },
        },
      },
    });
    const provider = set.provider("proxy")!;
    expect(provider.environment).toEqual(["PROXY_KEY"]);
    expect(set.model("proxy/m")).toMatchObject({
      endpoint: "https://proxy.example/api/v2/messages",
      authentication: { kind: "header", name: "api-key" },
      headers: { "x-client": "ze" },
    });
    expect(set.model("proxy/n")!.endpoint).toBe("https://proxy.example/api/chat/completions");
  });

  it("needs a baseURL and a protocol for a provider the catalog does not know", () => {
    expect(failed({ x: { definition: { protocol: "chat" } } })).toMatchObject({ path: "/providers/x/definition/baseURL" });
    expect(failed({ x: { definition: { baseURL: "http://127.0.0.1:1/v1" } } })).toMatchObject({ path: "/providers/x/definition/protocol" });
  });

  it("rejects unknown definition fields, unknown protocols and bad authentication, with a pointer", () => {
    expect(failed({ x: { definition: { baseURL: "http://h/v1", protocol: "chat", colour: 1 } } })).toMatchObject({ path: "/providers/x/definition" });
    expect(failed({ x: { definition: { baseURL: "http://h/v1", protocol: "gemini" } } })).toMatchObject({ path: "/providers/x/definition/protocol" });
    expect(failed({ x: { definition: { baseURL: "http://h/v1", protocol: "chat", authentication: { kind: "header" } } } })).toMatchObject({
      path: "/providers/x/definition/authentication/name",
    });
    expect(failed({ x: { definition: { baseURL: "http://h/v1", protocol: "chat", models: { m: { limits: { contextUnits: -1 } } } } } })).toMatchObject({
      path: "/providers/x/definition/models/m/limits/contextUnits",
    });
    expect(failed({ x: { definition: { baseURL: "http://h/v1", protocol: "chat", routes: { chat: "../up" } } } })).toMatchObject({
      path: "/providers/x/definition/routes/chat",
    });
  });

  it("lets definition.models override a catalog model field by field", () => {
    const set = resolved({
      openai: { definition: { models: { "gpt-4.1": { capabilities: { tools: false }, displayName: "Work 4.1" }, "gpt-new": { limits: { contextUnits: 5 } } } } },
    });
    const model = set.model("openai/gpt-4.1")!;
    expect(model.capabilities.tools).toBe(false);
    expect(model.displayName).toBe("Work 4.1");
    expect(model.capabilities.input).toContain("image");
    expect(model.limits.outputUnits).toBeGreaterThan(0);
    expect(set.model("openai/gpt-new")).toMatchObject({ protocol: "responses", limits: { contextUnits: 5, outputUnits: 0 } });
  });
});

describe("named entries with a base", () => {
  it("inherits the base's transport and models per entry, with its own credentials", () => {
    const set = resolved({
      "openai-work": { base: "openai", definition: { displayName: "Work GPT", credentials: { environment: ["OPENAI_WORK_API_KEY"] } } },
      "openai-personal": { base: "openai", definition: { displayName: "Personal GPT", credentials: { environment: ["OPENAI_PERSONAL_API_KEY"] } } },
    });
    const work = set.provider("openai-work")!;
    expect(work).toMatchObject({ base: "openai", displayName: "Work GPT", environment: ["OPENAI_WORK_API_KEY"], protocol: "responses" });
    expect(set.model("openai-work/gpt-4.1")).toMatchObject({ providerId: "openai-work", endpoint: "https://api.openai.com/v1/responses" });
    expect(set.model("openai-personal/gpt-4.1")!.providerId).toBe("openai-personal");
    expect(set.provider("openai")).toBeUndefined();
  });

  it("fails closed on an unknown, self or chained base", () => {
    expect(failed({ a: { base: "nowhere" } })).toMatchObject({ path: "/providers/a/base" });
    expect(failed({ openai: { base: "openai" } })).toMatchObject({ path: "/providers/openai/base" });
    expect(failed({ a: { base: "openai" }, b: { base: "a" } })).toMatchObject({ path: "/providers/b/base" });
  });
});

describe("enabled: false", () => {
  it("keeps a disabled entry listed but offers none of its models", () => {
    const set = resolved({ openai: { enabled: false }, anthropic: false, openrouter: true });
    expect(set.provider("openai")!.enabled).toBe(false);
    expect(set.provider("anthropic")!.enabled).toBe(false);
    expect(set.model("openai/gpt-4.1")).toBeUndefined();
    expect(set.provider("openrouter")!.enabled).toBe(true);
  });
});

describe("options", () => {
  it("overrides the base URL (every model's, per-model roots included), headers and timeout, and hides the key", () => {
    const set = resolved({
      openai: { options: { baseURL: "http://127.0.0.1:8080/proxy/v1/", headers: { "x-org": "a" }, timeout: 1500, apiKey: "sk-configured-secret" } },
    });
    const provider = set.provider("openai")!;
    expect(provider.timeoutMs).toBe(1500);
    expect(set.model("openai/gpt-4.1")).toMatchObject({ endpoint: "http://127.0.0.1:8080/proxy/v1/responses", headers: { "x-org": "a" }, timeoutMs: 1500 });
    expect(JSON.stringify(set.providers)).not.toContain("sk-configured-secret");
    expect(provider.configuredKey!.reveal()).toBe("sk-configured-secret");
  });

  it("treats timeout false / requestTimeoutMs null as unlimited", () => {
    expect(resolved({ openai: { options: { timeout: false } } }).provider("openai")!.timeoutMs).toBeUndefined();
    expect(resolved({ openai: { options: { requestTimeoutMs: null } } }).provider("openai")!.timeoutMs).toBeUndefined();
    expect(resolved({ openai: { options: { requestTimeoutMs: 700 } } }).provider("openai")!.timeoutMs).toBe(700);
  });

  it("rejects unknown options and bad values without echoing them", () => {
    expect(failed({ openai: { options: { apiKye: "sk-typo" } } })).toMatchObject({ path: "/providers/openai/options" });
    const error = failed({ openai: { options: { apiKey: 12345 } } });
    expect(error.path).toBe("/providers/openai/options/apiKey");
    expect(error.message).not.toContain("12345");
    expect(failed({ openai: { options: { timeout: 0 } } })).toMatchObject({ path: "/providers/openai/options/timeout" });
    expect(failed({ openai: { options: { headers: { "x-a": "line\r\nbreak" } } } })).toMatchObject({ path: "/providers/openai/options/headers/x-a" });
  });

  it("applies the base-URL rules", () => {
    for (const bad of ["http://h/v1?x=1", "http://h/v1?", "http://h/v1#", "https://user:pw@h/v1", "ftp://h/v1", "/relative/v1", ""]) {
      const error = failed({ openai: { options: { baseURL: bad } } });
      expect(error.path).toBe("/providers/openai/options/baseURL");
      expect(error.message).not.toContain("pw");
    }
  });
});

describe("base URLs", () => {
  it("normalizes trailing slashes and joins without double or missing segments", () => {
    expect(validateBaseURL("https://api.example.com/v1///")).toEqual({ ok: true, url: "https://api.example.com/v1" });
    expect(validateBaseURL("https://api.example.com")).toEqual({ ok: true, url: "https://api.example.com" });
    expect(joinEndpoint("https://api.example.com/v1", "chat/completions")).toBe("https://api.example.com/v1/chat/completions");
    expect(joinEndpoint("https://api.example.com", "/messages")).toBe("https://api.example.com/messages");
  });
});
