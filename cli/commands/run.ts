import { Args, Flags } from "@oclif/core";
import type { Turn } from "../../clients/index.js";
import { sessionIdFlag } from "../args.js";
import { ZeCommand } from "../base.js";

export default class Run extends ZeCommand {
  static override summary = "Run one prompt and print the answer as it streams.";
  static override description =
    "Creates a Session in the current directory (or continues --session), submits PROMPT and streams the answer to stdout. " +
    "Permission requests and questions are asked on the terminal; without one they are rejected and reported on stderr. " +
    "Exits 0 when the Turn completed, 1 when it failed, was cancelled or stopped at a limit (stderr names the outcome), 130 after Ctrl-C (which cancels the Turn).";
  static override examples = [
    '<%= config.bin %> run "Explain this repository"',
    '<%= config.bin %> run --model openai/gpt-5 --image-file diagram.png "What does this show?"',
    '<%= config.bin %> run --session 550e8400-e29b-41d4-a716-446655440000 --json "And the tests?"',
  ];
  static override args = { prompt: Args.string({ name: "PROMPT", description: "The prompt text.", required: true }) };
  static override flags = {
    model: Flags.string({ description: "Model as PROVIDER/MODEL (also the new Session's default)." }),
    "system-prompt": Flags.string({ description: "System prompt of the new Session.", exclusive: ["session"] }),
    session: sessionIdFlag({ description: "Continue this Session instead of creating one." }),
    json: Flags.boolean({ description: "Print the final Turn as JSON instead of streaming the text." }),
    image: Flags.string({ description: "Attach an image by URL (repeatable).", multiple: true, multipleNonGreedy: true }),
    "image-base64": Flags.string({ description: "Attach an inline image as MIME:BASE64 (repeatable).", multiple: true, multipleNonGreedy: true }),
    "image-file": Flags.string({ description: "Attach a local JPEG, PNG, GIF or WebP file (repeatable).", multiple: true, multipleNonGreedy: true }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Run);
    const { randomUUID } = await import("node:crypto");
    const { sdk, unwrap, watchTurn } = await import("../../clients/index.js");
    const { buildPrompt, errorLine, Interactions, outcomeLine, TextPrinter } = await import("../turn-io.js");
    const prompt = buildPrompt(args.prompt, flags);
    const connection = await this.connect(flags, { runTurns: true });
    const client = connection.client.client;
    const server = connection.server;

    let sessionId = flags.session;
    if (sessionId === undefined) {
      sessionId = randomUUID();
      const cwd = process.cwd();
      await unwrap(
        sdk.createSession({
          client,
          path: { server, sessionId },
          body: {
            ...(connection.local ? { workdir: cwd } : { clientWorkdir: cwd }),
            ...(flags.model !== undefined ? { defaultModel: flags.model } : {}),
            ...(flags["system-prompt"] !== undefined ? { systemPrompt: flags["system-prompt"] } : {}),
          },
        }),
      );
    }
    const turnId = randomUUID();
    await unwrap(
      sdk.submitPrompt({
        client,
        path: { server, sessionId },
        headers: { "x-ze-harness-client-id": connection.client.clientId },
        body: { delivery: "queue", turnId, prompt, ...(flags.model !== undefined ? { model: flags.model } : {}) },
      }),
    );

    // Ctrl-C cancels the Turn and waits for it to settle; a second Ctrl-C leaves at once.
    let interrupted = false;
    const onInterrupt = (): void => {
      if (interrupted) process.exit(130);
      interrupted = true;
      process.stderr.write("cancelling the Turn (Ctrl-C again to quit now)\n");
      void unwrap(sdk.cancelTurn({ client, path: { server, sessionId, turnId }, body: { reason: "interrupted" } })).catch((error: unknown) => {
        process.stderr.write(`${errorLine(error)}\n`);
        process.exit(130);
      });
    };
    process.on("SIGINT", onInterrupt);

    const terminal = process.stdin.isTTY === true;
    let readline: import("node:readline/promises").Interface | undefined;
    const ask = terminal
      ? async (question: string): Promise<string | undefined> => {
          const { createInterface } = await import("node:readline/promises");
          if (!readline) {
            readline = createInterface({ input: process.stdin, output: process.stderr });
            readline.on("SIGINT", onInterrupt); // a terminal in raw mode turns Ctrl-C into this event
          }
          return readline.question(question);
        }
      : undefined;
    const interactions = new Interactions(connection, ask);
    const printer = new TextPrinter();
    let turn: Turn;
    try {
      turn = await watchTurn(connection.client, {
        server,
        sessionId,
        turnId,
        onEvent: (_event, held) => {
          if (!flags.json) printer.update(held);
          interactions.scan(held);
        },
      });
      // Without a terminal the replies are API calls already under way; a terminal prompt left
      // open (its request settled otherwise) is abandoned.
      if (!terminal) await interactions.settled();
    } finally {
      process.off("SIGINT", onInterrupt);
      readline?.close();
    }
    if (flags.json) this.printJson(turn);
    else printer.finish();
    if (interrupted) this.exit(130);
    const failure = outcomeLine(turn);
    if (failure !== undefined) {
      process.stderr.write(`${failure}\n`);
      this.exit(1);
    }
  }
}
