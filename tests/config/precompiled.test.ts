// The build precompiles the config validator (tools/build-assets.mjs); the CLI loads it from
// dist/. It must accept and reject exactly what the source validator does.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { validateConfig } from "../../services/config/index.js";

const path = join(import.meta.dirname, "..", "..", "dist", "services", "config", "config.validator.cjs");

const samples: unknown[] = [
  {},
  { model: "openai/gpt-5" },
  { model: 5 },
  { model: "no-slash" },
  { providers: { openai: true, local: { definition: { baseURL: "http://127.0.0.1:1/v1", protocol: "chat", authentication: { kind: "none" } } } } },
  { approval: { timeoutMs: { kind: "finite", value: 0 } } },
  { approval: { timeoutMs: { kind: "finite", value: 10 } } },
  { approval: { timeoutMs: 5 } },
  { permissions: [{ action: "read", resource: "*", effect: "allow" }] },
  { permissions: [{ action: "read", resource: "*", effect: "maybe" }] },
  { unknownKey: true },
  { provider: { pacing: { kind: "exponential", initialDelayMs: 1, maximumDelayMs: 10, jitter: true } } },
];

describe("the precompiled config validator", () => {
  it("is built, and agrees with the source validator on every sample", () => {
    expect(existsSync(path), "run npm run build").toBe(true);
    const loaded = createRequire(import.meta.url)(path) as ((value: unknown) => boolean) | { default: (value: unknown) => boolean };
    const precompiled = typeof loaded === "function" ? loaded : loaded.default;
    const verdicts = samples.map((sample) => [precompiled(sample), validateConfig(sample, "sample.json").ok]);
    for (const [fast, full] of verdicts) expect(fast).toBe(full);
    expect(verdicts.filter(([, ok]) => ok).length).toBeGreaterThan(3);
    expect(verdicts.filter(([, ok]) => !ok).length).toBeGreaterThan(3);
  });
});
