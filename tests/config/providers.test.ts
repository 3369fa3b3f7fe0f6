// An empty `providers` map fails startup naming the config file that set it, like any other
// config error (`file: /providers: message`), from whichever layer it came.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { describeConfigError, fileSettingKey, loadConfig, type LoadedConfig } from "../../services/config/index.js";
import { createHarness } from "../../services/host/harness.js";
import { createModelGateway, ProviderSetupFailed } from "../../services/host/models.js";
import { sandbox, type Sandbox } from "./helpers.js";

let box: Sandbox;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => {
  box.dispose();
});

const GLOBAL = "xdg-config/ze-harness/config.json";
const PROJECT = "repo/ze-harness.config.json";

function load(configFile?: string): LoadedConfig {
  const result = loadConfig({ cwd: box.dir("repo"), env: box.env, ...(configFile !== undefined ? { configFile } : {}) });
  if (!result.ok) throw new Error(describeConfigError(result.error));
  return result.value;
}

function gatewayError(loaded: LoadedConfig): unknown {
  try {
    createModelGateway(loaded.config, box.env, loaded.layers);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("an empty providers map", () => {
  it("names the global file when it set the map", () => {
    const global = box.write(GLOBAL, { providers: {} });
    box.write(PROJECT, { model: "openai/gpt-5" });
    const loaded = load();
    expect(fileSettingKey(loaded.layers, "providers")).toBe(global);
    const error = gatewayError(loaded);
    expect(error).toBeInstanceOf(ProviderSetupFailed);
    expect(error).toMatchObject({ tag: "ProvidersEmpty", name: "ProvidersEmpty" });
    expect((error as Error).message).toBe(`${global}: /providers: the providers map is empty: list at least one provider, or remove the map to use the defaults (openai, opencode-go, openrouter)`);
  });

  it("names the project file when it set the map over a global file without one", () => {
    const global = box.write(GLOBAL, { model: "openai/gpt-5" });
    const project = box.write(PROJECT, { providers: {} });
    const message = (gatewayError(load()) as Error).message;
    expect(message).toContain(project);
    expect(message).not.toContain(global);
    expect(message).toContain("/providers");
  });

  it("names a --config file that set the map", () => {
    box.write(GLOBAL, { providers: {} });
    const explicit = box.write("elsewhere/custom.json", { providers: {} });
    const message = (gatewayError(load(join(box.root, "elsewhere/custom.json"))) as Error).message;
    expect(message.startsWith(`${explicit}: /providers: `)).toBe(true);
  });

  it("is not empty when another layer lists a provider", () => {
    box.write(GLOBAL, { providers: { openai: true } });
    box.write(PROJECT, { providers: {} });
    expect(gatewayError(load())).toBeUndefined();
  });

  it("fails createHarness with the file path and providers in the message", async () => {
    const project = box.write(PROJECT, { providers: {} });
    const env = { ...box.env, XDG_DATA_HOME: join(box.root, "xdg-data") };
    const error = await createHarness({ serverRoot: box.dir("repo"), env, database: ":memory:", runTurns: false }).then(
      async (harness) => {
        await harness.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: "ProvidersEmpty" });
    expect((error as Error).message).toContain(project);
    expect((error as Error).message).toContain("providers");
  });
});
