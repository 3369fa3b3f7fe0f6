// Shortcuts of the history suites: conversation entries, forks, compactions and the journal over
// the generated client (in process or against a `serve`), and how to recognise a compaction's
// summary request among the model's requests.
import { randomUUID } from "node:crypto";
import { sdk, type Compaction } from "../../clients/index.js";
import type { RecordedRequest, TestModel } from "../../tools/test-model/index.js";
import { ok } from "../support/calls.js";
import { CLIENT, seen, server, type Api } from "../turns/helpers.js";

export const entryCall = (h: Api, sessionId: string, body: unknown, clientId: string = CLIENT) =>
  sdk.appendConversation({ client: h.api.client, path: { server, sessionId }, headers: { "x-ze-harness-client-id": clientId }, body: body as never });

export async function appendEntry(h: Api, sessionId: string, text: string, entryId: string = randomUUID()) {
  return (await ok(entryCall(h, sessionId, { entryId, content: [{ type: "text", text }] }))).receipt;
}

export const forkCall = (h: Api, sessionId: string, forkedSessionId: string, body?: unknown) =>
  sdk.forkSession({ client: h.api.client, path: { server, sessionId, forkedSessionId }, ...(body !== undefined ? { body: body as never } : {}) });

export const compactCall = (h: Api, sessionId: string, body: Record<string, unknown> = {}) =>
  sdk.submitContextCompaction({
    client: h.api.client,
    path: { server, sessionId },
    headers: { "x-ze-harness-client-id": CLIENT },
    body: { compactionId: randomUUID(), ...body } as never,
  });

export const getCompaction = async (h: Api, sessionId: string, compactionId: string): Promise<Compaction> =>
  (await ok(sdk.getContextCompaction({ client: h.api.client, path: { server, sessionId, compactionId } }))).compaction;

export const listCompactions = (h: Api, sessionId: string, query: Record<string, string> = {}) =>
  ok(sdk.listSessionCompactions({ client: h.api.client, path: { server, sessionId }, query }));

/** A summary request (the compaction's own system prompt), as opposed to a Turn's model request. */
export const isSummaryRequest = (request: RecordedRequest | undefined): boolean => seen(request).includes("You compact the history");

/** The scripted answer of a summary request. */
export function summaryAnswer(summary: { overview: string; keyFacts?: string[]; decisions?: string[]; openTasks?: string[] }) {
  return { events: [{ type: "text" as const, text: JSON.stringify({ version: 1, keyFacts: [], decisions: [], openTasks: [], ...summary }) }] };
}

/** Answers summary requests with `summary` and everything else with a short text, when nothing is queued. */
export function replyWithSummaries(model: TestModel, summary: Parameters<typeof summaryAnswer>[0], answer = "ok"): void {
  model.reply((request) => (isSummaryRequest(request) ? summaryAnswer(summary) : { events: [{ type: "text", text: answer }] }));
}
