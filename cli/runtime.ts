// Runs a parsed command: run() with its context, then the connection closed, every failure as
// one line (cli/errors.ts). Resolves with the exit code; the caller exits once output is flushed.
import { checkConnectionFlags, connect, type Connection } from "./base.js";
import { describeError } from "./errors.js";
import type { CommandSpec, Context } from "./spec.js";
import type { Parsed } from "./parse.js";
import { withRestartHint } from "./config-hint.js";
import { readableBytes } from "./readable-bytes.js";
import { checkShortIds } from "./short-ids.js";

export async function execute(spec: CommandSpec, parsed: Parsed): Promise<number> {
  let connection: Connection | undefined;
  // Id prefixes (cli/short-ids.ts): their form checked before run(), resolved on connecting.
  let resolveIds: ((connection: Connection) => Promise<void>) | undefined;
  const context: Context<any, any> = {
    args: parsed.args,
    flags: parsed.flags,
    connect: async (options) => {
      if (!spec.connection) throw new Error("this command takes no connection flags");
      connection = await connect(parsed.flags, options);
      await resolveIds?.(connection);
      return connection;
    },
    // Workspace paths and terminal bytes gain their text beside the exact bytes (cli/readable-bytes.ts).
    printJson: (value) => void process.stdout.write(`${JSON.stringify(value, readableBytes, 2)}\n`),
  };
  let code: number;
  try {
    if (spec.connection) checkConnectionFlags(parsed.flags);
    resolveIds = checkShortIds(spec, parsed);
    code = (await spec.run(context)) ?? 0;
  } catch (error) {
    const { line, exitCode } = describeError(error);
    process.stderr.write(`${withRestartHint(line, error, connection)}\n`);
    code = exitCode;
  }
  try {
    await connection?.close();
  } catch (error) {
    process.stderr.write(`${describeError(error).line}\n`);
    code ||= 1;
  }
  return code;
}

/** Resolves once everything written to stdout and stderr so far has been handed to the OS. */
export function flushed(): Promise<void> {
  const drain = (stream: NodeJS.WriteStream): Promise<void> =>
    new Promise((resolve) => {
      if (stream.destroyed || !stream.writable) return resolve();
      stream.write("", () => resolve());
    });
  return Promise.all([drain(process.stdout), drain(process.stderr)]).then(() => undefined);
}

/** Exits with `code` as soon as the output is flushed (idle handles and timers do not hold the process). */
export async function exitWhenFlushed(code: number): Promise<never> {
  await flushed();
  process.exit(code);
}
