// `diagnostics` (bounded newest-first pages under a fixed revision fence), `watchDiagnostics`
// (the current revision on subscription and after every change; the revision is the Session's
// diagnostic sequence, independent of conversation history) and `context` (the latest prepared
// Main request, or the one `through` pins).
import type { ContextRequest, ContextResponse, Diagnostic, DiagnosticsData, DiagnosticsPage, DiagnosticsStreamEvent, TurnPhase } from "../../../generated/client/types.gen.js";
import type { SseMessage } from "../../../generated/server/routes.js";
import { notFound, validationFailure } from "../../contract/failure.js";
import { diagnostics as store, getSession, type DiagnosticRecord, type StorageHandle } from "../../storage/index.js";
import { pumpedStream, type Channel, type Wake } from "../events/channel.js";
import type { ActivityHub } from "../events/hub.js";
import { DEFAULT_STREAM_TIMING, type StreamTiming } from "../events/streams.js";
import { pageLimit, parseCount } from "../history/query.js";
import { ESTIMATOR, type ContextReportRecord } from "./record.js";

function toDiagnostic(record: DiagnosticRecord): Diagnostic {
  const out: Diagnostic = { sequence: record.sequence, kind: record.kind, cause: { code: record.code, message: record.message }, recordedAt: record.recordedAt };
  if (record.providerCode !== null) out.cause.providerCode = record.providerCode;
  if (record.limitName !== null) out.cause.limit = record.limitName;
  if (record.turnId !== null) out.turnId = record.turnId;
  if (record.eventRevision !== null) out.eventRevision = record.eventRevision;
  if (record.attempt !== null) out.attempt = record.attempt;
  return out;
}

export class DiagnosticsService {
  constructor(
    private readonly storage: StorageHandle,
    private readonly hub: ActivityHub,
    private readonly timing: StreamTiming = DEFAULT_STREAM_TIMING,
  ) {}

  private async requireSession(server: string, sessionId: string): Promise<void> {
    if (!(await getSession(this.storage, server, sessionId))) throw notFound("session", `Session ${sessionId} does not exist`);
  }

  async page(server: string, sessionId: string, query: DiagnosticsData["query"]): Promise<DiagnosticsPage> {
    const limit = pageLimit(query?.limit);
    const before = parseCount(query?.beforeSequence, "beforeSequence", 1);
    const requested = parseCount(query?.through, "through", 0);
    await this.requireSession(server, sessionId);
    const latest = await store.latestDiagnosticSequence(this.storage, sessionId);
    if (requested !== undefined && requested > latest) throw validationFailure(`Invalid request: query.through: ${requested} is past the Session's diagnostic revision (${latest})`);
    const through = requested ?? latest;
    if (before !== undefined && before > through + 1) throw validationFailure(`Invalid request: query.beforeSequence: ${before} is past the fence ${through}`);
    const rows = await store.listDiagnostics(this.storage, sessionId, { before: before ?? Number.MAX_SAFE_INTEGER, through, limit: limit + 1 });
    const page = rows.slice(0, limit);
    return { sessionId, through, diagnostics: page.map(toDiagnostic), nextBefore: rows.length > limit ? page.at(-1)!.sequence : null };
  }

  async watch(server: string, sessionId: string, signal?: AbortSignal): Promise<AsyncIterable<SseMessage<DiagnosticsStreamEvent>>> {
    await this.requireSession(server, sessionId);
    const timing = this.timing;
    const pump = async (channel: Channel<SseMessage<DiagnosticsStreamEvent>>, wake: Wake): Promise<void> => {
      let sent: number | undefined;
      let sentAt = 0;
      while (!channel.isClosed) {
        await channel.room();
        if (channel.isClosed) return;
        const revision = await store.latestDiagnosticSequence(this.storage, sessionId);
        if (revision !== sent || Date.now() - sentAt >= timing.heartbeatMs) {
          channel.push({ event: "diagnostics.revision", id: String(revision), data: { type: "diagnostics.revision", revision } });
          sent = revision;
          sentAt = Date.now();
        }
        await wake.wait(Math.min(timing.idleReadMs, timing.heartbeatMs));
      }
    };
    return pumpedStream(pump, (wake, channel) => [this.hub.onSession(sessionId, () => wake.set()), this.hub.onDeleted(sessionId, () => channel.close())], signal, timing.queue);
  }

  async context(server: string, sessionId: string, throughValue: string | undefined): Promise<ContextResponse> {
    const requested = parseCount(throughValue, "through", 1);
    await this.requireSession(server, sessionId);
    const latest = await store.latestContextSequence(this.storage, sessionId);
    if (requested !== undefined && requested > latest) throw validationFailure(`Invalid request: query.through: ${requested} is past the Session's latest prepared request (${latest})`);
    const found = await store.latestContext(this.storage, sessionId, requested);
    if (!found) return { sessionId, through: 0, request: null };
    const report = found.report as ContextReportRecord;
    const request: ContextRequest = {
      sequence: found.sequence,
      turnId: found.turnId,
      model: found.model,
      turnPhase: (found.phase as TurnPhase | null) ?? null,
      preparedAt: found.preparedAt,
      groups: [...report.groups],
      tools: [...report.tools],
      estimator: ESTIMATOR,
      estimatedInputTokens: report.estimatedInputTokens,
      reportedInputTokens: found.reportedInputTokens,
      contextUnits: report.contextUnits,
    };
    return { sessionId, through: found.sequence, request };
  }
}
