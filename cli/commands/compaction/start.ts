import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { sdk, unwrap, type Compaction } from "../../../clients/index.js";
import { sessionIdArg, uuidFlag } from "../../args.js";
import { defineCommand, flag } from "../../spec.js";

/** How often a waiting start re-reads the compaction (there is no compaction event stream). */
const POLL_MS = 100;

const settled = (compaction: Compaction): boolean => compaction.phase === "completed" || compaction.phase === "cancelled" || compaction.phase === "failed";

export default defineCommand({
  summary: "Compact a Session's context now; print the settled compaction as JSON.",
  description:
    "Admits a manual compaction: it runs in the Session's work order (after the running Turn, before the Turns admitted later) and replaces the history admitted before it with a model-written summary for later Turns; the full history stays readable. Waits for it to settle and exits 0 when it completed (also with nothing to compact), 1 otherwise. " +
    "--detach prints the receipt at once instead; without --remote the compaction then waits for the next host that runs the Session.",
  examples: ["<%= config.bin %> compaction start SESSION_ID", "<%= config.bin %> compaction start SESSION_ID --model openai/gpt-5-mini --detach"],
  args: { sessionId: sessionIdArg },
  flags: {
    model: flag.string({ description: "Model that writes the summary, as PROVIDER/MODEL (default: the Session's)." }),
    compaction: uuidFlag("COMPACTION_ID", "Compaction id (a UUID); generated when omitted. Repeating a start with it is idempotent."),
    detach: flag.boolean({ description: "Print the receipt without waiting for the compaction." }),
  },
  connection: true,
  async run({ args, flags, connect, printJson }) {
    // Embedded, this process runs the compaction (and the Session's earlier work) while it waits.
    const connection = await connect({ runTurns: !flags.detach });
    const client = connection.client.client;
    const path = { server: connection.server, sessionId: args.sessionId };
    const { receipt } = await unwrap(
      sdk.submitContextCompaction({
        client,
        path,
        headers: { "x-ze-harness-client-id": connection.client.clientId },
        body: { compactionId: flags.compaction ?? randomUUID(), ...(flags.model !== undefined ? { model: flags.model } : {}) },
      }),
    );
    if (flags.detach) return printJson(receipt);
    for (;;) {
      const { compaction } = await unwrap(sdk.getContextCompaction({ client, path: { ...path, compactionId: receipt.compactionId } }));
      if (settled(compaction)) {
        printJson(compaction);
        return compaction.phase === "completed" ? 0 : 1;
      }
      await sleep(POLL_MS);
    }
  },
});
