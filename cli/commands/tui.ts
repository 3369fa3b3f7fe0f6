// `ze-harness tui [SESSION_ID]` (also a bare `ze-harness` on a terminal, and `ze-harness -s ID`):
// the interactive TUI over the same connection every command uses. The TUI itself (Ink and
// React) is loaded only here, as its own chunk.
import { resolve } from "node:path";
import { usageError } from "../errors.js";
import { defineCommand, flag } from "../spec.js";
import { existingSessionFlag, sandboxFlag } from "../args.js";
import { optionalIdArg, withChar } from "../short-ids.js";
import type { SandboxSetting } from "../../services/sandbox/policy.js";

export default defineCommand({
  summary: "Open the interactive TUI.",
  description:
    "Opens the interactive terminal UI: type a prompt and press Enter to start a Session in the current directory, or resume SESSION_ID (also -s/--resume). " +
    "Ctrl+X is the leader key (Ctrl+X M model, A agent, S sessions, N new Session, O open by ID, Q quit); Shift+Enter (or Ctrl+J) makes a newline; Ctrl+V pastes an image or text from the clipboard; Esc cancels the running Turn; Ctrl+C quits and leaves Sessions running on the server. " +
    "A bare `ze-harness` on a terminal opens it too. Needs a terminal on stdin and stdout.",
  examples: ["<%= config.bin %> tui", "<%= config.bin %> tui 550e8400-e29b-41d4-a716-446655440000", "<%= config.bin %> -s 550e8400-e29b-41d4-a716-446655440000", "<%= config.bin %> tui --workdir ../other"],
  args: {
    sessionId: optionalIdArg("session", "SESSION_ID", "Session to resume."),
  },
  flags: {
    resume: withChar(existingSessionFlag("Resume this Session (the same as SESSION_ID)."), "s"),
    workdir: flag.string({ description: "Working directory of new Sessions (default: the current directory).", exclusive: ["no-workdir"] }),
    "no-workdir": flag.boolean({ description: "Start new Sessions in the server root instead of the current directory.", exclusive: ["workdir"] }),
    onboarding: flag.boolean({ description: "Open provider setup at start." }),
    "no-color": flag.boolean({ description: "Render without colours (as NO_COLOR does)." }),
    sandbox: sandboxFlag,
  },
  connection: true,
  async run({ args, flags, connect }) {
    const sessionId = (args as { sessionId?: string | undefined }).sessionId;
    if (sessionId !== undefined && flags.resume !== undefined && sessionId !== flags.resume) throw usageError("give the Session either as SESSION_ID or with --resume, not both");
    if (!process.stdin.isTTY || !process.stdout.isTTY) throw usageError("the TUI needs a terminal on stdin and stdout (use `run` or `chat` in scripts)");
    // React's production build unless told otherwise: the development build checks every
    // element and commit, which a streaming Turn's renders pay for on every keystroke.
    process.env["NODE_ENV"] ??= "production";
    // --no-color or NO_COLOR: no colour from Ink or the Markdown renderer (both read FORCE_COLOR when they load).
    if (flags["no-color"] === true || (process.env["NO_COLOR"] ?? "") !== "") {
      process.env["NO_COLOR"] = "1";
      process.env["FORCE_COLOR"] = "0";
    }
    // Ink, React and the TUI load while the connection opens (the embedded host starts).
    const loading = import("../tui/run.js");
    loading.catch(() => undefined);
    const connection = await connect({ runTurns: true, sandbox: flags.sandbox as SandboxSetting | undefined });
    // A newer server release, with native auto-update on: the signed channel is checked (and a
    // release staged) once for this session, in a process of its own (services/release/background.ts).
    const { tuiUpdateCheck } = await import("../../services/release/background.js");
    const { binaryPath, daemonRelease } = await import("../../services/daemon/release.js");
    const notices = connection.versionNotices;
    const check = tuiUpdateCheck({ env: process.env, release: daemonRelease(), command: [process.execPath, binaryPath()], notice: (text) => notices.notify(text) });
    notices.watch((version) => check(version.harnessVersion));
    const { runTui } = await loading;
    return runTui({
      client: connection.client,
      server: connection.server,
      where: { directory: flags["no-workdir"] ? undefined : resolve(flags.workdir ?? process.cwd()), local: connection.local },
      sessionId: sessionId ?? flags.resume,
      onboarding: flags.onboarding === true,
      versionNotices: connection.versionNotices,
    });
  },
});
