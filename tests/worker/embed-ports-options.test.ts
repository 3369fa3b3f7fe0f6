// WorkerHarnessHost's embedder options compiled as the host does at wake, in Node:
// `providerDefinitions` keyed by an id `providers` does not list fail the host by default and are
// left out and reported under `unknownProviders: 'report'`; an id known only through its
// definition is not "unknown"; malformed ports and workspaces are refused naming the option; the
// Computer's `shell` maps exits, timeouts, truncation and backend failures (never the backend's
// message) onto the Node tool's result text and typed failures.
import { describe, expect, it } from "vitest";
import { defineProvider } from "../../plugin/index.js";
import { embedderPortProblem } from "../../services/core/turns/dispatch.js";
import { MAX_SHELL_OUTPUT_BYTES, type ToolContext } from "../../services/tools/tool.js";
import { compileHostSettings } from "../../worker/host-options.js";
import { computerShellTool, workspaceProblem, type WorkspaceExecResult } from "../../worker/host-workspace.js";

const relay = defineProvider({
  definitionId: "example.relay",
  version: "1",
  acquireModel: () => ({
    async *stream() {
      yield { _tag: "ResponseFinished" as const, reason: "stop" as const };
    },
  }),
});
const relayEntry = { definition: { models: { fast: {} } } };

describe("WorkerHarnessHost embedder options", () => {
  it("compiles providerDefinitions: listed ids join the plan, unlisted ones fail or are reported", () => {
    const compiled = compileHostSettings({ providers: { relay: relayEntry, openai: true }, providerDefinitions: { relay } });
    if (!compiled.ok) throw new Error(compiled.message);
    expect(compiled.value.configured.providers.model("relay/fast")).toMatchObject({ ref: "relay/fast" });
    expect(compiled.value.rejectedProviders).toEqual([]);

    // An id the providers do not list: the host is refused, naming the id.
    const failed = compileHostSettings({ providers: { openai: true }, providerDefinitions: { relay } });
    expect(failed).toMatchObject({ ok: false, tag: "ProviderInvalid", message: expect.stringContaining("relay") });

    // Under 'report' it is left out and listed; relay known through its definition is not rejected.
    const reported = compileHostSettings({ providers: { relay: relayEntry, openai: true }, providerDefinitions: { relay, other: relay }, unknownProviders: "report" });
    if (!reported.ok) throw new Error(reported.message);
    expect(reported.value.rejectedProviders).toEqual([{ providerId: "other", message: expect.stringContaining('"other"') }]);
    expect(reported.value.configured.providers.providers.map((provider) => provider.id)).toEqual(["openai", "relay"]);

    expect(compileHostSettings({ providerDefinitions: [] as never })).toMatchObject({ ok: false, tag: "ConfigInvalid", message: expect.stringContaining("option providerDefinitions") });
  });

  it("refuses malformed ports and workspaces", () => {
    expect(embedderPortProblem({ contentResolver: { resolve: async () => [] }, toolDispatch: { dispatch: async () => ({ kind: "refused", message: "no" }) } })).toBeUndefined();
    expect(embedderPortProblem({ contentResolver: () => [] })).toContain("contentResolver");
    expect(embedderPortProblem({ toolDispatch: {} })).toContain("toolDispatch");
    expect(workspaceProblem(undefined)).toBeUndefined();
    expect(workspaceProblem({})).toBeUndefined();
    expect(workspaceProblem({ computer: { exec: "sh" } })).toContain("computer");
    expect(workspaceProblem("workspace")).toBeDefined();
  });

  it("maps the Computer's answers onto shell's result and typed failures", async () => {
    const context = (signal = new AbortController().signal) => ({ workdir: "/workspace/app", sessionId: "s", turnId: "t", toolCallId: "c", signal, artifactsDirectory: "", askQuestion: async () => ({}) }) as unknown as ToolContext;
    // The base the Worker passes is worker/tools.ts's unavailableShellTool (not imported: it installs the Worker's validator).
    const base = { id: "shell", description: "", inputSchema: { type: "object" as const }, permissions: () => [], execute: async () => ({ result: { format: "text" as const, value: "unused" } }) };
    const answering = (result: WorkspaceExecResult | Error) =>
      computerShellTool(
        {
          exec: async () => {
            if (result instanceof Error) throw result;
            return result;
          },
        },
        base,
      );
    const text = async (result: WorkspaceExecResult) => (await answering(result).execute({ command: "x" }, context())).result.value;
    expect(await text({ exitCode: 0, output: "hello\n" })).toBe("hello\n(exit code 0)");
    expect(await text({ exitCode: null, output: "" })).toBe("(terminated by a signal)");
    expect(await text({ exitCode: null, output: "partial", timedOut: true })).toBe("partial\n(Timed out after 120000 ms; the command was stopped.)");
    const long = await text({ exitCode: 0, output: `${"a".repeat(MAX_SHELL_OUTPUT_BYTES)}tail` });
    expect(long).toMatch(/^\(Output truncated: showing the last 51200 of 51204 bytes\.\)\n/);
    expect(long).toContain("tail\n(exit code 0)");

    await expect(answering(new Error("internal host detail sk-123")).execute({ command: "x" }, context())).rejects.toMatchObject({ code: "spawn_failed", message: expect.not.stringContaining("sk-123") });
    await expect(answering({ exitCode: 0, output: "" }).execute({ command: "x", tty: true }, context())).rejects.toMatchObject({ code: "terminal_unavailable" });
    const aborted = new AbortController();
    aborted.abort();
    await expect(answering({ exitCode: 0, output: "" }).execute({ command: "x" }, context(aborted.signal))).rejects.toMatchObject({ code: "interrupted" });
  });
});
