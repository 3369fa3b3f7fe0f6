import type { Migration } from "./types.js";

/**
 * `turn.prepared_request` and `turn_prepared_request_recorded`: a Turn's change that carries a
 * prepared Main request sets it on the Turn (its model, report, time and reported input tokens,
 * as JSON) in the change's own UPDATE, and the trigger records it in `session_context` under the
 * Session's next context sequence — one statement for both, not two. The column keeps the Turn's
 * latest prepared request as staged; `session_context` stays what the context API reads.
 * Additive: older builds never set the column (they insert their records themselves), so the
 * trigger never fires for them.
 */
export const migration: Migration = {
  id: "20261210110000_turn-prepared-request",
  breaking: false,
  async up(tx) {
    await tx.execute("ALTER TABLE turn ADD COLUMN prepared_request text");
    await tx.execute(`CREATE TRIGGER turn_prepared_request_recorded AFTER UPDATE OF prepared_request ON turn WHEN NEW.prepared_request IS NOT NULL BEGIN
  INSERT INTO session_context (session_id, sequence, turn_id, model, report, prepared_at, reported_input_tokens)
  SELECT NEW.session_id, COALESCE((SELECT MAX(sequence) FROM session_context WHERE session_id = NEW.session_id), 0) + 1, NEW.id,
    json_extract(NEW.prepared_request, '$.model'), json_extract(NEW.prepared_request, '$.report'),
    json_extract(NEW.prepared_request, '$.preparedAt'), json_extract(NEW.prepared_request, '$.reportedInputTokens');
END`);
  },
};
