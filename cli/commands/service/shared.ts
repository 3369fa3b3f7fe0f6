// What the `service` commands share: the daemon flags, and naming the running Turns a stop or
// restart will end (on stderr, before it ends them).
import type { RunningTurn } from "../../../services/daemon/client.js";
import { flag } from "../../spec.js";

export const daemonFlags = {
  database: flag.string({ description: "Database the daemon opens: a path, :memory:, or a libsql:// or http(s):// URL (or ZE_HARNESS_DB)." }),
  config: flag.string({ description: "Config file the daemon uses instead of the nearest ze-harness.config.json." }),
  sandbox: flag.string({ description: "OS sandbox of the daemon's shell commands, terminals and MCP stdio servers (overrides the config's sandbox.mode).", options: ["workspace-write", "read-only", "off"] }),
};

/** Names the Turns the stop ends, before it ends them. */
export function nameEndingTurns(turns: readonly RunningTurn[], verb: "stopping" | "restarting"): void {
  if (turns.length === 0) return;
  const lines = [
    `${verb} the local daemon ends ${turns.length} running Turn${turns.length === 1 ? "" : "s"}:`,
    ...turns.map((turn) => `  session ${turn.sessionId} turn ${turn.turnId}`),
  ];
  process.stderr.write(`${lines.join("\n")}\n`);
}
