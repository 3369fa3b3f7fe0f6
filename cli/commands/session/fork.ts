import { randomUUID } from "node:crypto";
import { sdk, unwrap, ZeClientError } from "../../../clients/index.js";
import { sessionIdArg, sessionIdFlag } from "../../args.js";
import { usageError } from "../../errors.js";
import { isIdPrefix, resolveIdPrefix } from "../../short-ids.js";
import { defineCommand, flag } from "../../spec.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export default defineCommand({
  summary: "Copy a Session's settled history into a new Session; print the new Session as JSON.",
  description:
    "Without --turn the whole settled history is copied (running and queued work stays behind); --turn ID|SEQUENCE copies the history before that Turn, which stays behind for resending. The fork inherits the workdir, default model, system prompt and permission rules, and records forkedFrom; saved grants are not copied. Repeating a fork with the same --session and --turn returns the same Session.",
  examples: ["<%= config.bin %> session fork SESSION_ID", "<%= config.bin %> session fork SESSION_ID --turn 3 --session 550e8400-e29b-41d4-a716-446655440000"],
  args: { sessionId: sessionIdArg },
  flags: {
    turn: flag.string({ description: "Fork before this Turn: its id (or a unique prefix of 8+ hex digits), or its sequence number in the Session." }),
    session: sessionIdFlag("Id of the new Session (a UUID); generated when omitted."),
  },
  connection: true,
  async run({ args, flags, connect, printJson }) {
    const turn = turnOf(flags.turn);
    const connection = await connect();
    const client = connection.client.client;
    const server = connection.server;
    let turnId = turn && "turnId" in turn ? turn.turnId : undefined;
    if (turn && "prefix" in turn) turnId = await resolveIdPrefix(connection, "turn", turn.prefix, args.sessionId);
    if (turn && "sequence" in turn) {
      // A sequence names the Session's Turn at that position in its work order.
      const page = await unwrap(sdk.listSessionTurns({ client, path: { server, sessionId: args.sessionId }, query: { afterSequence: String(turn.sequence - 1), limit: "1" } }));
      const found = page.turns.find((state) => state.turn.sequence === turn.sequence);
      if (!found) throw new ZeClientError(404, { _tag: "NotFoundError", message: `Session ${args.sessionId} has no Turn with sequence ${turn.sequence}` });
      turnId = found.turn.id;
    }
    const { session } = await unwrap(
      sdk.forkSession({ client, path: { server, sessionId: args.sessionId, forkedSessionId: flags.session ?? randomUUID() }, ...(turnId !== undefined ? { body: { turnId } } : {}) }),
    );
    printJson(session);
  },
});

/** `--turn`: a Turn id, or a Turn sequence; anything else is a usage error. */
function turnOf(turn: string | undefined): { turnId: string } | { sequence: number } | { prefix: string } | undefined {
  if (turn === undefined) return undefined;
  if (UUID.test(turn)) return { turnId: turn.toLowerCase() };
  // Up to 7 digits is a sequence; 8 or more hex digits a Turn id prefix (cli/short-ids.ts).
  if (/^[1-9]\d{0,6}$/.test(turn)) return { sequence: Number(turn) };
  if (isIdPrefix(turn)) return { prefix: turn };
  throw usageError(`--turn ${JSON.stringify(turn)} is neither a Turn id (a UUID or a unique prefix of 8 or more hex digits) nor a Turn sequence (a positive integer)`);
}
