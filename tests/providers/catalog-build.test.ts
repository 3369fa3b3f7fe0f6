// The maintainer pipeline (`npm run update:models` = tools/catalog/build.mjs) on a small
// models.dev document read from a file: URL: corrections applied, the published document and the
// snapshot written, `builtAt` stable across unchanged rebuilds, and every refusal the reference
// names (unknown fields, duplicates, no-op and stale entries, a required provider without models).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { normalizeModelsDev } from "../../services/providers/index.js";

const root = join(import.meta.dirname, "..", "..");
const build = join(root, "tools", "catalog", "build.mjs");

const upstream = {
  openai: {
    id: "openai",
    name: "OpenAI",
    npm: "@ai-sdk/openai",
    env: ["OPENAI_API_KEY"],
    models: {
      "gpt-x": { id: "gpt-x", name: "GPT X", tool_call: true, limit: { context: 1000, output: 100 }, cost: { input: 1, output: 2 } },
      "gpt-old": { id: "gpt-old", name: "GPT Old" },
      "gpt-typo": { id: "gpt-typo", name: "GTP Typo" },
    },
  },
  gateway: {
    id: "gateway",
    name: "Gateway",
    npm: "@ai-sdk/openai-compatible",
    api: "https://gateway.example/v1",
    models: { c: { id: "c", name: "C" } },
  },
  unused: { id: "unused", npm: "@ai-sdk/openai-compatible", api: "https://unused.example/v1", models: { u: { id: "u" } } },
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "ze-catalog-build-"));
  writeFileSync(join(dir, "api.json"), JSON.stringify(upstream));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function run(corrections: unknown, ...extra: string[]): { status: number | null; stdout: string; stderr: string } {
  writeFileSync(join(dir, "corrections.json"), typeof corrections === "string" ? corrections : JSON.stringify(corrections));
  const result = spawnSync(process.execPath, [build, "--corrections", join(dir, "corrections.json"), "--out", join(dir, "snapshot.json"), ...extra], {
    cwd: root,
    encoding: "utf8",
    env: { PATH: process.env["PATH"] ?? "", MODELS_DEV_URL: pathToFileURL(join(dir, "api.json")).href },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const base = { providers: ["gateway", "openai"], required: ["openai"] };

describe("update:models", () => {
  it("is the package script", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts["update:models"]).toBe("node tools/catalog/build.mjs");
  });

  it("applies corrections, keeps the listed providers, and writes the snapshot as the published document's normalized form", async () => {
    const corrections = {
      ...base,
      models: [
        { provider: "openai", model: "gpt-old", reason: "Retired upstream", hidden: true },
        { provider: "openai", model: "gpt-typo", reason: "Typo", displayName: "GPT Typo" },
        { provider: "gateway", model: "c", reason: "Served on /messages", protocol: "messages" },
      ],
    };
    const first = run(corrections, "--published", join(dir, "published.json"));
    expect(first.stderr).toBe("");
    expect(first.status).toBe(0);
    const snapshot = JSON.parse(readFileSync(join(dir, "snapshot.json"), "utf8"));
    expect(Object.keys(snapshot.providers)).toEqual(["gateway", "openai"]);
    expect(Object.keys(snapshot.providers.openai.models)).toEqual(["gpt-typo", "gpt-x"]);
    expect(snapshot.providers.openai.models["gpt-typo"].displayName).toBe("GPT Typo");
    expect(snapshot.providers.gateway.models.c.protocol).toBe("messages");
    expect(Date.parse(snapshot.builtAt)).not.toBeNaN();
    const published = JSON.parse(readFileSync(join(dir, "published.json"), "utf8"));
    expect(published.gateway.models.c.provider).toEqual({ npm: "@ai-sdk/anthropic" });
    const { builtAt: _builtAt, ...content } = snapshot;
    expect(content).toEqual(normalizeModelsDev(published, snapshot.source));

    // An unchanged rebuild keeps builtAt and the bytes; --check agrees.
    const before = readFileSync(join(dir, "snapshot.json"), "utf8");
    const second = run(corrections);
    expect(second.stdout).toMatch(/unchanged/);
    expect(readFileSync(join(dir, "snapshot.json"), "utf8")).toBe(before);
    expect(run(corrections, "--check").status).toBe(0);
    // A content change is stale for --check (and writes nothing).
    const changed = run({ ...corrections, models: corrections.models.slice(1) }, "--check");
    expect(changed.status).toBe(1);
    expect(changed.stderr).toMatch(/stale/);
    expect(readFileSync(join(dir, "snapshot.json"), "utf8")).toBe(before);
  });

  it.each<[string, unknown, RegExp]>([
    ["an unknown top-level field", { ...base, extra: true }, /unknown field "extra"/],
    ["an unknown field in a model entry", { ...base, models: [{ provider: "openai", model: "gpt-x", reason: "r", hiden: true }] }, /models\[0\]: unknown field "hiden"/],
    ["an entry without a reason", { ...base, models: [{ provider: "openai", model: "gpt-x", hidden: true }] }, /a reason is required/],
    [
      "a duplicate entry",
      { ...base, models: [{ provider: "openai", model: "gpt-x", reason: "a", displayName: "A" }, { provider: "openai", model: "gpt-x", reason: "b", displayName: "B" }] },
      /duplicate correction for openai\/gpt-x/,
    ],
    ["an entry that changes nothing", { ...base, models: [{ provider: "openai", model: "gpt-x", reason: "same", displayName: "GPT X" }] }, /changes nothing/],
    ["a stale entry (upstream no longer lists the model)", { ...base, models: [{ provider: "openai", model: "gpt-gone", reason: "r", hidden: true }] }, /upstream no longer lists openai\/gpt-gone/],
    ["an unknown protocol", { ...base, models: [{ provider: "openai", model: "gpt-x", reason: "r", protocol: "websocket" }] }, /unknown protocol "websocket"/],
    ["a stale provider override", { ...base, overrides: [{ provider: "gone", reason: "r", api: "https://x" }] }, /upstream no longer lists "gone"/],
    ["a preset upstream now lists", { ...base, presets: [{ provider: "gateway", reason: "r", record: { id: "gateway" } }] }, /upstream now lists "gateway"/],
    ["a required provider with no usable models", { ...base, required: ["openai", "gateway"], models: [{ provider: "gateway", model: "c", reason: "r", hidden: true }] }, /required provider "gateway" has no usable models/],
    ["a listed provider upstream lacks", { ...base, providers: ["openai", "nowhere"] }, /upstream does not list "nowhere"/],
    ["a corrections file that is not JSON", "{ nope", /could not be read as JSON/],
  ])("refuses %s and writes nothing", (_, corrections, message) => {
    const result = run(corrections, "--published", join(dir, "published.json"));
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(existsSync(join(dir, "snapshot.json"))).toBe(false);
    expect(existsSync(join(dir, "published.json"))).toBe(false);
  });
});
