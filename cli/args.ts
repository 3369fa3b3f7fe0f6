// Shared argument definitions.
import { usageError } from "./errors.js";
import { arg, flag } from "./spec.js";
import { idArg, idFlag } from "./short-ids.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A Session id in its canonical (lower-case) form; anything else is a usage error. */
async function parseSessionId(value: string): Promise<string> {
  if (!UUID.test(value)) throw usageError(`${JSON.stringify(value)} is not a Session id (a UUID)`);
  return value.toLowerCase();
}

/** SESSION_ID of an existing Session: its UUID or a unique prefix (cli/short-ids.ts). */
export const sessionIdArg = idArg("session", "SESSION_ID", "The Session.");

/** TURN_ID of a Turn of the command's Session: its UUID or a unique prefix. */
export const turnIdArg = idArg("turn", "TURN_ID", "The Turn.");

/** `--session ID` naming an existing Session (run, plugins): its UUID or a unique prefix. */
export const existingSessionFlag = (description: string) => idFlag("session", description);

/** `--session ID` of a Session to create (a full UUID), in the canonical form SESSION_ID resolves to. */
export const sessionIdFlag = (description: string) => flag.string({ description, parse: parseSessionId });

/** A UUID flag (an entry or compaction id) in canonical lower-case form. */
export const uuidFlag = (name: string, description: string) =>
  flag.string({
    description,
    parse: async (value: string) => {
      if (!UUID.test(value)) throw usageError(`${JSON.stringify(value)} is not a valid ${name} (a UUID)`);
      return value.toLowerCase();
    },
  });

/** A UUID argument (a request, Turn or saved permission id) in canonical lower-case form. */
export function uuidArg(name: string, description: string) {
  return arg.string({
    name,
    description,
    required: true,
    parse: async (value: string) => {
      if (!UUID.test(value)) throw usageError(`${JSON.stringify(value)} is not a valid ${name} (a UUID)`);
      return value.toLowerCase();
    },
  });
}

/** A JSON argument, or `-` for stdin: the parsed value, or a usage error naming NAME. */
export async function readJsonArgument(value: string, name: string): Promise<unknown> {
  const text = value === "-" ? (await import("node:fs")).readFileSync(0, "utf8") : value;
  try {
    return JSON.parse(text);
  } catch {
    throw usageError(`${name} is not valid JSON`);
  }
}

/**
 * `--sandbox MODE` of the commands that run Turns (run, chat, tui, acp, serve): the OS sandbox of
 * shell commands, terminals and MCP stdio servers, over the config's `sandbox.mode`. Through the
 * daemon it is one of the flags the daemon starts with ("first start wins").
 */
export const sandboxFlag = flag.string({
  description: "OS sandbox (bubblewrap) for shell commands, terminals and MCP stdio servers: workspace-write, read-only or off (default: the config's sandbox.mode, else off).",
  options: ["workspace-write", "read-only", "off"],
});
