import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { sdk, unwrap, watchTurn } from "../../clients/index.js";
import { sandboxFlag, sessionIdArg } from "../args.js";
import type { SandboxSetting } from "../../services/sandbox/policy.js";
import { authorField } from "../author.js";
import { errorLine } from "../errors.js";
import { defineCommand, flag } from "../spec.js";
import { DescendantRequests } from "../descendants.js";
import { Interactions, outcomeLine, report, TextPrinter } from "../turn-io.js";

export default defineCommand({
  summary: "Chat with a Session line by line on stdin.",
  description:
    "Every non-empty line queues a Turn; `/steer TEXT` steers the running Turn instead. Answers stream to stdout in order. " +
    "At the end of input the command waits for the queued Turns, then exits: 0 when all completed, 1 otherwise. " +
    "On a terminal, permission requests and questions (also those of sub-agents) are answered by the next line; without one they are rejected.",
  examples: ["<%= config.bin %> chat 550e8400-e29b-41d4-a716-446655440000", "printf 'Hi\\nAnd now?\\n' | <%= config.bin %> chat SESSION_ID"],
  args: { sessionId: sessionIdArg },
  flags: {
    model: flag.string({ description: "Model for the queued Turns as PROVIDER/MODEL (default: the Session's)." }),
    agent: flag.string({ description: "Agent for the queued Turns (default: the Session's, else the host's default agent)." }),
    sandbox: sandboxFlag,
  },
  connection: true,
  async run({ args, flags, connect }) {
    const connection = await connect({ runTurns: true, sandbox: flags.sandbox as SandboxSetting | undefined });
    const client = connection.client.client;
    const path = { server: connection.server, sessionId: args.sessionId };
    const headers = { "x-ze-harness-client-id": connection.client.clientId };
    const author = authorField(); // the TUI's identity: `you` there, one author across surfaces
    await unwrap(sdk.getSession({ client, path })); // an unknown Session fails before reading input

    // On a terminal the next input line answers a pending permission request or question.
    const terminal = process.stdin.isTTY === true;
    let ended = false;
    let answer: ((line: string | undefined) => void) | undefined;
    const ask = terminal
      ? (question: string): Promise<string | undefined> => {
          if (ended) return Promise.resolve(undefined);
          process.stderr.write(question);
          return new Promise((resolve) => (answer = resolve));
        }
      : undefined;
    const interactions = new Interactions(connection, ask);
    // Sub-agents' requests surface here too, learned from the server stream.
    const descendants = new DescendantRequests(connection, args.sessionId, interactions);
    descendants.start();

    // Turns are followed one at a time, in the order they were queued.
    let current: string | undefined;
    let unsuccessful = 0;
    let work: Promise<void> = Promise.resolve();
    const follow = async (turnId: string): Promise<void> => {
      current = turnId;
      const printer = new TextPrinter();
      try {
        const turn = await watchTurn(connection.client, {
          ...path,
          turnId,
          onEvent: (_event, held) => {
            printer.update(held);
            interactions.scan(held);
          },
        });
        printer.finish();
        const failure = outcomeLine(turn);
        if (failure !== undefined) {
          unsuccessful += 1;
          report(failure);
        }
      } catch (error) {
        printer.finish();
        unsuccessful += 1;
        report(errorLine(error));
      } finally {
        current = undefined;
      }
    };

    const onInterrupt = (): void => {
      const turnId = current;
      if (turnId === undefined) process.exit(130);
      report("cancelling the running Turn");
      void unwrap(sdk.cancelTurn({ client, path: { ...path, turnId }, body: { reason: "interrupted" } })).catch((error: unknown) => report(errorLine(error)));
    };
    process.on("SIGINT", onInterrupt);
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
    try {
      for await (const raw of lines) {
        if (answer) {
          const resolve = answer;
          answer = undefined;
          resolve(raw);
          continue;
        }
        const line = raw.trim();
        if (line === "") continue;
        try {
          if (line === "/steer" || line.startsWith("/steer ")) {
            const text = line.slice("/steer".length).trim();
            if (text === "") report("error: /steer needs TEXT");
            else if (current === undefined) report("error: no running Turn to steer");
            else {
              await unwrap(
                sdk.submitPrompt({
                  client,
                  path,
                  headers,
                  body: { delivery: "steer", steerId: randomUUID(), expectedTurnId: current, prompt: [{ type: "text", text }], ...author },
                }),
              );
            }
            continue;
          }
          const turnId = randomUUID();
          await unwrap(
            sdk.submitPrompt({
              client,
              path,
              headers,
              body: {
                delivery: "queue",
                turnId,
                prompt: [{ type: "text", text: line }],
                ...(flags.model !== undefined ? { model: flags.model } : {}),
                ...(flags.agent !== undefined ? { agent: flags.agent } : {}),
                ...author,
              },
            }),
          );
          work = work.then(() => follow(turnId));
        } catch (error) {
          report(errorLine(error));
        }
      }
      ended = true;
      answer?.(undefined);
      await work;
    } finally {
      descendants.stop();
      process.off("SIGINT", onInterrupt);
      lines.close();
    }
    return unsuccessful > 0 ? 1 : 0;
  },
});
