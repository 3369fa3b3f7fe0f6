import { randomUUID } from "node:crypto";
import { isatty } from "node:tty";
import { sdk, unwrap, watchTurn, type CreateSessionRequest, type Turn } from "../../clients/index.js";
import type { Connection } from "../base.js";
import { sandboxFlag, existingSessionFlag } from "../args.js";
import { authorField } from "../author.js";
import { onStdoutClosed, stdoutClosed } from "../closed-stdout.js";
import { readKey } from "../keypress.js";
import { errorLine } from "../errors.js";
import { arg, defineCommand, flag } from "../spec.js";
import { DescendantRequests } from "../descendants.js";
import { withProviderHint } from "../provider-hint.js";
import type { SandboxSetting } from "../../services/sandbox/policy.js";
import { buildPrompt, Interactions, outcomeLine, report, TextPrinter } from "../turn-io.js";

export default defineCommand({
  summary: "Run one prompt and print the answer as it streams.",
  description:
    "Creates a Session in the current directory (or continues --session), submits PROMPT and streams the answer to stdout. " +
    "Permission requests and questions — also those of sub-agents the Turn starts — are asked on the terminal; without one they are rejected and reported on stderr. " +
    "Exits 0 when the Turn completed, 1 when it failed, was cancelled or stopped at a limit (stderr names the outcome), 130 after Ctrl-C (which cancels the Turn).",
  examples: [
    '<%= config.bin %> run "Explain this repository"',
    '<%= config.bin %> run --model openai/gpt-5 --image-file diagram.png "What does this show?"',
    '<%= config.bin %> run --agent plan "How would you add caching?"',
    '<%= config.bin %> run --session 550e8400-e29b-41d4-a716-446655440000 --json "And the tests?"',
  ],
  args: { prompt: arg.string({ name: "PROMPT", description: "The prompt text.", required: true }) },
  flags: {
    model: flag.string({ description: "Model as PROVIDER/MODEL (also the new Session's default)." }),
    agent: flag.string({ description: "Agent that runs the Turn (a primary-capable one, such as build or plan; default: the Session's, else the host's default agent)." }),
    "system-prompt": flag.string({ description: "System prompt of the new Session.", exclusive: ["session"] }),
    session: existingSessionFlag("Continue this Session instead of creating one."),
    json: flag.boolean({ description: "Print the final Turn as JSON instead of streaming the text." }),
    image: flag.string({ description: "Attach an image by URL (repeatable).", multiple: true, multipleNonGreedy: true }),
    "image-base64": flag.string({ description: "Attach an inline image as MIME:BASE64 (repeatable).", multiple: true, multipleNonGreedy: true }),
    "image-file": flag.string({ description: "Attach a local JPEG, PNG, GIF or WebP file (repeatable).", multiple: true, multipleNonGreedy: true }),
    sandbox: sandboxFlag,
  },
  connection: true,
  async run({ args, flags, connect, printJson }) {
    const prompt = buildPrompt(args.prompt, flags);
    const connection = await connect({ runTurns: true, sandbox: flags.sandbox as SandboxSetting | undefined });
    // A closed stdout exits at once (the Turn keeps running on the daemon or server); embedded,
    // this process runs the Turn, so it lets it finish and discards the answer (cli/closed-stdout.ts).
    if (connection.atomic) onStdoutClosed(() => {});
    const client = connection.client.client;
    const server = connection.server;
    const turnId = randomUUID();
    const submit = (sessionId: string) =>
      unwrap(
        sdk.submitPrompt({
          client,
          path: { server, sessionId },
          headers: { "x-ze-harness-client-id": connection.client.clientId },
          body: {
            delivery: "queue",
            turnId,
            prompt,
            ...(flags.model !== undefined ? { model: flags.model } : {}),
            ...(flags.agent !== undefined ? { agent: flags.agent } : {}),
            // The TUI's author identity: the TUI shows `you` for this prompt (cli/author.ts).
            ...authorField(),
          },
        }),
      );
    let sessionId = flags.session;
    try {
      if (sessionId === undefined) {
        sessionId = randomUUID();
        const body = {
          ...(connection.local ? { workdir: process.cwd() } : { clientWorkdir: process.cwd() }),
          ...(flags.model !== undefined ? { defaultModel: flags.model } : {}),
          ...(flags["system-prompt"] !== undefined ? { systemPrompt: flags["system-prompt"] } : {}),
        };
        await createAndSubmit(connection, { sessionId, body }, submit);
      } else {
        await submit(sessionId);
      }
    } catch (error) {
      // No provider connected: one line that says how to connect one.
      throw await withProviderHint(connection.client, error);
    }
    return followTurn(connection, { sessionId, turnId, newSession: flags.session === undefined, json: flags.json === true, printJson });
  },
});

/**
 * A new Session and its first prompt as one unit: embedded, one transaction (a refused prompt
 * leaves no Session behind); through the daemon or --remote, a Session whose prompt was refused
 * is deleted again.
 */
async function createAndSubmit(
  connection: Connection,
  session: { readonly sessionId: string; readonly body: CreateSessionRequest },
  submit: (sessionId: string) => Promise<unknown>,
): Promise<void> {
  const client = connection.client.client;
  const path = { server: connection.server, sessionId: session.sessionId };
  await connection.atomically(async () => {
    await unwrap(sdk.createSession({ client, path, body: session.body }));
    try {
      await submit(session.sessionId);
    } catch (error) {
      if (!connection.atomic) {
        await unwrap(sdk.deleteSession({ client, path, body: { reason: "its first prompt was not admitted" } })).catch((cleanup: unknown) => report(errorLine(cleanup)));
      }
      throw error;
    }
  });
}

/** Streams (or, with --json, prints) the Turn until it finishes; answers its requests; the exit code. */
async function followTurn(
  connection: Connection,
  turn: { readonly sessionId: string; readonly turnId: string; readonly newSession: boolean; readonly json: boolean; readonly printJson: (value: unknown) => void },
): Promise<number> {
  const client = connection.client.client;
  const path = { server: connection.server, sessionId: turn.sessionId, turnId: turn.turnId };
  // Ctrl-C cancels the Turn and waits for it to settle; a second Ctrl-C leaves at once.
  let interrupted = false;
  const onInterrupt = (): void => {
    if (interrupted) process.exit(130);
    interrupted = true;
    report("cancelling the Turn (Ctrl-C again to quit now)");
    void unwrap(sdk.cancelTurn({ client, path, body: { reason: "interrupted" } })).catch((error: unknown) => {
      report(errorLine(error));
      process.exit(130);
    });
  };
  process.on("SIGINT", onInterrupt);

  // Whether stdin is a terminal, asked of the descriptor: touching process.stdin builds its stream
  // (≈ 2.5 ms of a warm-daemon `run`, whose stdin is mostly not read at all).
  const terminal = isatty(0);
  // A question's answer is a line (one readline per question, so a permission key read in raw
  // mode between them reaches no line buffer); a permission reply is one key (cli/keypress.ts).
  let readline: import("node:readline/promises").Interface | undefined;
  const ask = terminal
    ? async (question: string): Promise<string | undefined> => {
        const { createInterface } = await import("node:readline/promises");
        readline = createInterface({ input: process.stdin, output: process.stderr });
        readline.on("SIGINT", onInterrupt); // a terminal in raw mode turns Ctrl-C into this event
        try {
          return await readline.question(question);
        } finally {
          readline.close();
          readline = undefined;
        }
      }
    : undefined;
  const choose = terminal ? (question: string, keys: readonly string[]) => readKey(question, { keys, interrupt: onInterrupt }) : undefined;
  const interactions = new Interactions(connection, ask, choose);
  const descendants = new DescendantRequests(connection, turn.sessionId, interactions);
  // Sub-agents are started by a Turn's `task` calls: a new Session has none until its Turn calls a
  // Tool, so its watch starts then (a plain answer opens no server stream). A continued Session
  // may have sub-agents of earlier Turns still asking: its watch starts at once. The watch reads
  // the requests already pending when it starts, so starting late misses none.
  let watching = false;
  const watchDescendants = (): void => {
    if (watching) return;
    watching = true;
    descendants.start();
  };
  if (!turn.newSession) watchDescendants();
  const printer = new TextPrinter();
  let finished: Turn;
  try {
    finished = await watchTurn(connection.client, {
      ...path,
      onEvent: (event, held) => {
        if (!watching && (event.type.startsWith("turn.tool.") || held.parts.some((part) => part.type === "tool"))) watchDescendants();
        if (!turn.json) printer.update(held);
        interactions.scan(held);
      },
    });
    // Without a terminal the replies are API calls already under way; a terminal prompt left
    // open (its request settled otherwise) is abandoned.
    if (!terminal) await interactions.settled();
  } finally {
    descendants.stop();
    process.off("SIGINT", onInterrupt);
    readline?.close();
  }
  if (turn.json) turn.printJson(finished);
  else printer.finish();
  if (interrupted) return 130;
  if (stdoutClosed()) return 0;
  const failure = outcomeLine(finished);
  if (failure === undefined) return 0;
  report(failure);
  return 1;
}
