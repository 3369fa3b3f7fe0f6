// The Worker's configuration variables (worker/config.ts) as the reference reads them: the
// provider map is an allowlist (`"{}"` invalid), permission rules are the Server scope, the
// case-sensitivity and CodeMode flags are `true`/`false`, the approval timeout is positive
// milliseconds or `unlimited`; every refusal names its variable and never echoes its value.
import { describe, expect, it } from "vitest";
import { readWorkerConfig } from "../../worker/config.js";

const PROVIDERS = JSON.stringify({
  test: { definition: { displayName: "T", baseURL: "http://127.0.0.1:9/v1", protocol: "chat", authentication: { kind: "none" }, models: { scripted: { displayName: "S" } } } },
});

describe("the Worker's configuration variables", () => {
  it("reads every variable into the host's configuration", () => {
    const read = readWorkerConfig({
      HARNESS_PROVIDERS: PROVIDERS,
      HARNESS_PERMISSIONS: JSON.stringify([{ action: "shell", resource: "git *", effect: "allow" }]),
      HARNESS_PERMISSION_CASE_SENSITIVE: "false",
      HARNESS_APPROVAL_TIMEOUT_MS: "30000",
      HARNESS_CODEMODE_ENABLED: "false",
      HARNESS_MODEL: "test/scripted",
    });
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.value.config).toEqual({
      model: "test/scripted",
      providers: JSON.parse(PROVIDERS),
      permissions: [{ action: "shell", resource: "git *", effect: "allow" }],
      permissionMatching: { caseSensitive: false },
      approval: { timeoutMs: { kind: "finite", value: 30000 } },
      codemode: { enabled: false },
    });
    expect(read.value.providers.model("test/scripted")?.ref).toBe("test/scripted");
    expect(readWorkerConfig({ HARNESS_PROVIDERS: PROVIDERS, HARNESS_APPROVAL_TIMEOUT_MS: "unlimited" })).toMatchObject({ ok: true, value: { config: { approval: { timeoutMs: { kind: "unlimited" } } } } });
    // Absent: the default providers, nothing else set.
    expect(readWorkerConfig({})).toMatchObject({ ok: true, value: { config: {} } });
  });

  it("refuses a bad value naming the variable, never echoing the value", () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ HARNESS_PROVIDERS: "{}" }, "ProvidersEmpty", "HARNESS_PROVIDERS"],
      [{ HARNESS_PROVIDERS: "{secret-value" }, "ConfigInvalid", "HARNESS_PROVIDERS"],
      [{ HARNESS_PROVIDERS: JSON.stringify({ test: { definition: { baseURL: 7 } } }) }, "ProviderInvalid", "HARNESS_PROVIDERS"],
      [{ HARNESS_PERMISSIONS: JSON.stringify([{ action: "shell", resource: "*", effect: "secret-value" }]) }, "ConfigInvalid", "HARNESS_PERMISSIONS"],
      [{ HARNESS_PERMISSIONS: JSON.stringify({ secret: "secret-value" }) }, "ConfigInvalid", "HARNESS_PERMISSIONS"],
      [{ HARNESS_PERMISSION_CASE_SENSITIVE: "secret-value" }, "ConfigInvalid", "HARNESS_PERMISSION_CASE_SENSITIVE"],
      [{ HARNESS_APPROVAL_TIMEOUT_MS: "0" }, "ConfigInvalid", "HARNESS_APPROVAL_TIMEOUT_MS"],
      [{ HARNESS_APPROVAL_TIMEOUT_MS: "secret-value" }, "ConfigInvalid", "HARNESS_APPROVAL_TIMEOUT_MS"],
      [{ HARNESS_CODEMODE_ENABLED: "secret-value" }, "ConfigInvalid", "HARNESS_CODEMODE_ENABLED"],
      [{ HARNESS_PROVIDERS: PROVIDERS, HARNESS_MODEL: "secret-value/x" }, "ConfigInvalid", "HARNESS_MODEL"],
    ];
    for (const [variables, tag, variable] of cases) {
      const read = readWorkerConfig(variables);
      expect(read, JSON.stringify(variables)).toMatchObject({ ok: false, tag });
      if (read.ok) continue;
      expect(read.message).toContain(variable);
      expect(read.message).not.toContain("secret-value");
    }
  });
});
