// `runtime reload` re-reads the configuration's `providers` map, not only the catalog data: a
// provider added to config.json after start is listed and usable after the reload, with its
// configured key; a providers map that does not compile keeps the previous catalog.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { getRuntimeModels, sdk, unwrap } from "../../clients/index.js";
import { credentialHash } from "../../tools/test-model/server.js";
import { startModelHarness, writeGlobalConfig, type ModelHarness } from "../support/model.js";

const KEY = "sk-added-after-start-0123456789";

let h: ModelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const configFile = (harness: ModelHarness): string => join(harness.home.env["XDG_CONFIG_HOME"]!, "ze-harness", "config.json");
const reload = async (harness: ModelHarness) => unwrap(sdk.reload({ client: harness.api.client, body: {} }));
const refs = async (harness: ModelHarness): Promise<string[]> => (await getRuntimeModels(harness.api)).models.map((model) => `${model.providerId}/${model.id}`);

describe("runtime reload and the providers map", () => {
  it("a provider added to config.json after start is listed and answers Turns after the reload", async () => {
    h = await startModelHarness();
    const harness = h;
    expect(await refs(harness)).not.toContain("added/late-model");
    const config = JSON.parse(readFileSync(configFile(harness), "utf8")) as { providers: Record<string, unknown> };
    writeGlobalConfig(harness.home, {
      ...config,
      providers: {
        ...config.providers,
        added: {
          definition: { displayName: "Added later", baseURL: harness.model.openaiBaseURL, protocol: "chat", authentication: { kind: "bearer" }, models: { "late-model": {} } },
          options: { apiKey: KEY },
        },
      },
    });
    expect((await reload(harness)).result).toBe("reloaded");
    expect(await refs(harness)).toContain("added/late-model");

    harness.model.enqueue({ events: [{ type: "text", text: "from the late provider" }] });
    const sessionId = await harness.createSession();
    const turnId = await harness.submit(sessionId, "hello", { model: "added/late-model" });
    const { turn } = await harness.finish(sessionId, turnId);
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "from the late provider" });
    expect(harness.model.requests.at(-1)!.headers["authorization"]).toBe(`Bearer ${credentialHash(KEY)}`);
  });

  it("a providers map that does not compile keeps the previous catalog", async () => {
    const warnings: string[] = [];
    h = await startModelHarness({ harness: { onWarning: (message) => warnings.push(message) } });
    const harness = h;
    const before = await refs(harness);
    const config = JSON.parse(readFileSync(configFile(harness), "utf8")) as { providers: Record<string, unknown> };
    // A base that is not a catalog provider cannot compile; the rest of the file is fine.
    writeGlobalConfig(harness.home, { ...config, providers: { ...config.providers, broken: { base: "no-such-catalog-provider" } } });
    await reload(harness);
    expect(warnings.join("\n")).toMatch(/could not be compiled/);
    expect(await refs(harness)).toEqual(before);
  });
});
