// reportJournal from a plugin tool into real storage: entries land in the Session's journal
// (read back through listPluginJournal), and every rejection — unregistered kind, schema, size,
// per-kind and per-Turn caps — writes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk } from "../../clients/index.js";
import { MAX_JOURNAL_ENTRIES_PER_TURN } from "../../plugin/index.js";
import { inlineCandidate, loadPluginGeneration, storageJournalSink, unavailableCapabilities, type PluginToolDefinition } from "../../services/plugins/index.js";
import { ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { queue, runToEnd, server } from "../turns/helpers.js";
import { hostActivation, toolContext } from "./helpers.js";

let h: ModelHarness;
let report: PluginToolDefinition;
beforeAll(async () => {
  h = await startModelHarness();
  h.model.reply(() => ({ events: [{ type: "text", text: "ok" }] }));
  const result = await loadPluginGeneration({
    activation: hostActivation(),
    capabilities: unavailableCapabilities(),
    journal: storageJournalSink(h.harness.storage),
    candidates: [
      inlineCandidate({
        id: "acme.deploy",
        setup: (c: any) => {
          c.journal.registerKind({ kind: "deploy.done", dataSchema: { type: "object", properties: { env: { type: "string", maxLength: 10 } }, required: ["env"] }, maxEntriesPerTurn: 2, maxDataBytes: 64 });
          c.journal.registerKind({ kind: "note", dataSchema: { type: "object" } });
          c.tools.register({
            id: "report",
            description: "Reports journal entries",
            inputSchema: { type: "object", properties: { entries: { type: "array" } } },
            execute: async (input: { entries: unknown[] }, ctx: any) => {
              const outcomes: string[] = [];
              for (const entry of input.entries) outcomes.push(await ctx.reportJournal(entry).then(() => "stored", (error: { _tag: string; message: string; publicMessage?: string }) => `${error._tag}${error.publicMessage ? "+public" : ""}: ${error.message}`));
              return outcomes;
            },
          });
        },
      }),
    ],
  });
  if (!result.ok) throw new Error(result.message);
  report = result.generation.tools[0]!;
});
afterAll(async () => {
  await h.close();
});

async function turn(): Promise<{ sessionId: string; turnId: string }> {
  const sessionId = await h.createSession();
  const receipt = await queue(h, sessionId, "go");
  await runToEnd(h, sessionId, receipt.turnId);
  return { sessionId, turnId: receipt.turnId };
}

const outcomes = async (ids: { sessionId: string; turnId: string }, entries: unknown[]) =>
  ((await report.execute({ entries }, toolContext({ ...ids, toolCallId: "call_7" }))).result as { value: string[] }).value;

describe("reportJournal", () => {
  it("stores valid entries attributed to the plugin and call, and rejects the rest without writing", async () => {
    const ids = await turn();
    const results = await outcomes(ids, [
      { kind: "deploy.done", summary: "Deployed to staging", data: { env: "staging" } },
      { kind: "unknown", summary: "x", data: {} },
      { kind: "deploy.done", summary: "bad", data: { env: 1 } },
      { kind: "deploy.done", summary: "big", data: { env: "x".repeat(70) } },
      { kind: "note", summary: "\uD800 lone", data: {} },
      { kind: "note", summary: "s".repeat(300), data: { ok: true } },
      { kind: "deploy.done", summary: "Deployed to prod", data: { env: "prod" } },
      { kind: "deploy.done", summary: "third of a kind capped at two", data: { env: "dev" } },
    ]);
    expect(results.map((result) => result.split(":")[0])).toEqual(["stored", "PluginError", "PluginError", "PluginError", "PluginError", "stored", "stored", "PluginError"]);
    expect(results[1]).toContain('kind "unknown" is not registered');
    expect(results[3]).toContain("more than the kind's 64");
    expect(results[7]).toContain('2 entries of kind "deploy.done"');
    const page = await ok(sdk.listPluginJournal({ client: h.api.client, path: { server, sessionId: ids.sessionId } }));
    expect(page.entries.map((entry) => [entry.kind, entry.summary.length, entry.data])).toEqual([
      ["deploy.done", 19, { env: "staging" }],
      ["note", 256, { ok: true }],
      ["deploy.done", 16, { env: "prod" }],
    ]);
    expect(page.entries[0]).toMatchObject({ pluginId: "acme.deploy", toolCallId: "call_7", turnId: ids.turnId, sequence: 1 });
  });

  it("caps a Turn's entries across kinds, and drops reports made outside a Turn", async () => {
    const ids = await turn();
    // 48 notes and 2 deploys fill the Turn; the next note is under its kind's cap but over the Turn's.
    const notes = Array.from({ length: MAX_JOURNAL_ENTRIES_PER_TURN - 2 }, (_, i) => ({ kind: "note", summary: `n${i}`, data: {} }));
    const deploys = [{ kind: "deploy.done", summary: "a", data: { env: "a" } }, { kind: "deploy.done", summary: "b", data: { env: "b" } }];
    const many = [...notes, ...deploys, { kind: "note", summary: "one too many", data: {} }];
    const results = await outcomes(ids, many);
    expect(results.filter((result) => result === "stored")).toHaveLength(MAX_JOURNAL_ENTRIES_PER_TURN);
    expect(results.at(-1)).toContain(`already holds ${MAX_JOURNAL_ENTRIES_PER_TURN} journal entries`);
    expect(await outcomes({ sessionId: ids.sessionId, turnId: "" }, [{ kind: "note", summary: "outside", data: {} }])).toEqual(["stored"]);
    const page = await ok(sdk.listPluginJournal({ client: h.api.client, path: { server, sessionId: ids.sessionId }, query: { limit: "100" } }));
    expect(page.entries).toHaveLength(MAX_JOURNAL_ENTRIES_PER_TURN);
    expect(page.entries.some((entry) => entry.summary === "outside")).toBe(false);
  });
});
