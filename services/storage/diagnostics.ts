/**
 * Session-scoped operational records: `session_diagnostic` (execution, model-step and
 * automatic-title failures with safe typed causes — never provider bodies; numbered per Session by
 * `sequence`, which is also the diagnostic revision) and `session_context` (the Main requests a
 * Session prepared: the role/tool grouping and estimates core computed, plus the provider-reported
 * input usage once it arrives). Neither is copied by a fork: a fork's records are its own work.
 */
import { isStorageHandle, type StorageHandle, type StorageTransaction } from "./database.js";
import type { SqlExecutor } from "./engine.js";
import { mapBusy } from "./errors.js";

type Context = StorageHandle | StorageTransaction;

function read<T>(context: Context, fn: (sql: SqlExecutor) => Promise<T>): Promise<T> {
  return isStorageHandle(context) ? mapBusy(() => fn(context.reader().sql)) : fn(context.sql);
}

function write<T>(context: Context, fn: (tx: StorageTransaction) => Promise<T>): Promise<T> {
  return isStorageHandle(context) ? context.transaction(fn, { durability: "relaxed" }) : fn(context);
}

export type DiagnosticKind = "execution" | "model_step" | "automatic_title";

export interface NewDiagnostic {
  readonly sessionId: string;
  readonly kind: DiagnosticKind;
  readonly turnId: string | null;
  /** The Turn revision of the event that recorded it (a settlement), when one did. */
  readonly eventRevision: number | null;
  /** The model request attempt that failed (model-step failures). */
  readonly attempt: number | null;
  readonly code: string;
  readonly message: string;
  readonly providerCode: string | null;
  readonly limitName: string | null;
  readonly recordedAt: number;
}

export interface DiagnosticRecord extends NewDiagnostic {
  readonly sequence: number;
}

const DIAGNOSTIC_COLUMNS = "session_id, sequence, kind, turn_id, event_revision, attempt, code, message, provider_code, limit_name, recorded_at";

function diagnosticFromRow(raw: Record<string, unknown>): DiagnosticRecord {
  return {
    sessionId: raw["session_id"] as string,
    sequence: raw["sequence"] as number,
    kind: raw["kind"] as DiagnosticKind,
    turnId: (raw["turn_id"] as string | null) ?? null,
    eventRevision: (raw["event_revision"] as number | null) ?? null,
    attempt: (raw["attempt"] as number | null) ?? null,
    code: raw["code"] as string,
    message: raw["message"] as string,
    providerCode: (raw["provider_code"] as string | null) ?? null,
    limitName: (raw["limit_name"] as string | null) ?? null,
    recordedAt: raw["recorded_at"] as number,
  };
}

/** Appends one diagnostic under the Session's next diagnostic sequence. */
export function insertDiagnostic(context: Context, diagnostic: NewDiagnostic): Promise<number> {
  return write(context, async (tx) => {
    const row = await tx.sql.get<{ sequence: number }>(
      `INSERT INTO session_diagnostic (${DIAGNOSTIC_COLUMNS})
       SELECT ?1, COALESCE((SELECT MAX(sequence) FROM session_diagnostic WHERE session_id = ?1), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10
       RETURNING sequence`,
      [
        diagnostic.sessionId,
        diagnostic.kind,
        diagnostic.turnId,
        diagnostic.eventRevision,
        diagnostic.attempt,
        diagnostic.code.slice(0, 128),
        diagnostic.message.slice(0, 4096),
        diagnostic.providerCode?.slice(0, 128) ?? null,
        diagnostic.limitName,
        diagnostic.recordedAt,
      ],
    );
    return row!.sequence;
  });
}

/** A settled Turn's failure (a `failed` or `limit_reached` outcome), recorded in the settlement's transaction. */
export async function recordSettlementDiagnostic(
  tx: StorageTransaction,
  turn: { readonly sessionId: string; readonly turnId: string; readonly outcome: unknown; readonly revision: number; readonly completedAt: number | null },
): Promise<void> {
  const outcome = turn.outcome as { kind?: string; fault?: { code?: string; message?: string; providerCode?: string }; limit?: { name?: string }; diagnostic?: { code?: string; message?: string } } | null;
  if (outcome?.kind !== "failed" && outcome?.kind !== "limit_reached") return;
  const cause = outcome.kind === "failed" ? outcome.fault : outcome.diagnostic;
  await insertDiagnostic(tx, {
    sessionId: turn.sessionId,
    kind: "execution",
    turnId: turn.turnId,
    eventRevision: turn.revision,
    attempt: null,
    code: cause?.code ?? outcome.kind,
    message: cause?.message ?? "The Turn failed",
    providerCode: outcome.kind === "failed" ? (outcome.fault?.providerCode ?? null) : null,
    limitName: outcome.kind === "limit_reached" ? (outcome.limit?.name ?? null) : null,
    recordedAt: turn.completedAt ?? Date.now(),
  });
}

export function latestDiagnosticSequence(context: Context, sessionId: string): Promise<number> {
  return read(context, async (sql) => (await sql.get<{ last: number | null }>("SELECT MAX(sequence) AS last FROM session_diagnostic WHERE session_id = ?", [sessionId]))?.last ?? 0);
}

/** Up to `limit` diagnostics with sequence below `before` (and at most `through`), newest first. */
export function listDiagnostics(context: Context, sessionId: string, options: { readonly before: number; readonly through: number; readonly limit: number }): Promise<DiagnosticRecord[]> {
  return read(context, async (sql) =>
    (
      await sql.all(`SELECT ${DIAGNOSTIC_COLUMNS} FROM session_diagnostic WHERE session_id = ? AND sequence < ? AND sequence <= ? ORDER BY sequence DESC LIMIT ?`, [
        sessionId,
        options.before,
        options.through,
        options.limit,
      ])
    ).map(diagnosticFromRow),
  );
}

// ---------------------------------------------------------------------------
// Prepared Main requests

export interface ContextRecord {
  readonly sessionId: string;
  readonly sequence: number;
  readonly turnId: string;
  readonly model: string;
  /** Core's grouping of the request (JSON). */
  readonly report: unknown;
  readonly reportedInputTokens: number | null;
  readonly preparedAt: number;
}

/** A prepared Main request to record (its Session and Turn are the change's). */
export interface PreparedRequestRecord {
  readonly model: string;
  readonly report: unknown;
  readonly preparedAt: number;
  readonly reportedInputTokens: number | null;
}

/** Records a prepared Main request under the Session's next context sequence. */
export function insertContext(context: Context, record: Omit<ContextRecord, "sequence" | "reportedInputTokens"> & { readonly reportedInputTokens?: number | null }): Promise<number> {
  return write(context, async (tx) => {
    const row = await tx.sql.get<{ sequence: number }>(
      `INSERT INTO session_context (session_id, sequence, turn_id, model, report, prepared_at, reported_input_tokens)
       SELECT ?1, COALESCE((SELECT MAX(sequence) FROM session_context WHERE session_id = ?1), 0) + 1, ?2, ?3, ?4, ?5, ?6
       RETURNING sequence`,
      [record.sessionId, record.turnId, record.model, JSON.stringify(record.report), record.preparedAt, record.reportedInputTokens ?? null],
    );
    return row!.sequence;
  });
}

/** Sets the provider-reported input tokens of a recorded request: the Turn's one prepared at `preparedAt`. */
export function setContextUsage(context: Context, request: { readonly sessionId: string; readonly turnId: string; readonly preparedAt: number }, inputTokens: number): Promise<void> {
  return write(context, async (tx) => {
    await tx.sql.run("UPDATE session_context SET reported_input_tokens = ? WHERE session_id = ? AND turn_id = ? AND prepared_at = ?", [inputTokens, request.sessionId, request.turnId, request.preparedAt]);
  });
}

/** The latest recorded request at or below `through` (any when undefined), with its Turn's phase. */
export function latestContext(context: Context, sessionId: string, through: number | undefined): Promise<(ContextRecord & { readonly phase: string | null }) | undefined> {
  return read(context, async (sql) => {
    const raw = await sql.get(
      `SELECT c.session_id, c.sequence, c.turn_id, c.model, c.report, c.reported_input_tokens, c.prepared_at, t.phase
       FROM session_context c LEFT JOIN turn t ON t.id = c.turn_id
       WHERE c.session_id = ? AND c.sequence <= ? ORDER BY c.sequence DESC LIMIT 1`,
      [sessionId, through ?? Number.MAX_SAFE_INTEGER],
    );
    if (!raw) return undefined;
    return {
      sessionId: raw["session_id"] as string,
      sequence: raw["sequence"] as number,
      turnId: raw["turn_id"] as string,
      model: raw["model"] as string,
      report: JSON.parse(raw["report"] as string),
      reportedInputTokens: (raw["reported_input_tokens"] as number | null) ?? null,
      preparedAt: raw["prepared_at"] as number,
      phase: (raw["phase"] as string | null) ?? null,
    };
  });
}

export function latestContextSequence(context: Context, sessionId: string): Promise<number> {
  return read(context, async (sql) => (await sql.get<{ last: number | null }>("SELECT MAX(sequence) AS last FROM session_context WHERE session_id = ?", [sessionId]))?.last ?? 0);
}
