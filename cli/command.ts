// The root of every command: one-line errors on stderr and the exit codes scripts rely on —
// 2 for usage errors (anything wrong with the command line), 1 for everything else
// (API errors, I/O). Imports only oclif, so light commands stay light.
import { Command, Errors, type Interfaces } from "@oclif/core";
import { stripVTControlCharacters } from "node:util";

type Parsed = { [name: string]: any };

/** oclif's multi-line messages (lists, "See more help with --help", ANSI) folded into one line. */
export function oneLine(text: string): string {
  return stripVTControlCharacters(text)
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && line !== "See more help with --help")
    .join(" ")
    .replace(/\s+/g, " ");
}

/** A usage error: printed as one line, exit code 2. */
export function usageError(message: string): Errors.CLIError {
  return new Errors.CLIError(message, { exit: 2 });
}

export abstract class BaseCommand extends Command {
  /** Every failure while reading the command line is a usage error, also from custom arg and flag parsers. */
  protected override async parse<F extends Parsed, B extends Parsed, A extends Parsed>(
    options?: Interfaces.Input<F, B, A>,
    argv?: string[],
  ): Promise<Interfaces.ParserOutput<F, B, A>> {
    try {
      return await super.parse(options, argv);
    } catch (error) {
      if (error instanceof Errors.CLIError) throw error;
      throw usageError(error instanceof Error ? error.message : String(error));
    }
  }

  protected override async catch(error: Error & { exitCode?: number }): Promise<void> {
    if (error instanceof Errors.ExitError) throw error;
    // An API error (ZeClientError or any error carrying an encoded error body).
    const failure = error as { body?: { _tag?: unknown; message?: unknown } };
    if (typeof failure.body?._tag === "string") {
      const message = typeof failure.body.message === "string" ? failure.body.message : error.message;
      process.stderr.write(`error: ${failure.body._tag}: ${oneLine(message)}\n`);
      this.exit(1);
    }
    if (error instanceof Errors.CLIError) {
      process.stderr.write(`error: ${oneLine(error.message)}\n`);
      this.exit(error.oclif.exit ?? 2);
    }
    process.stderr.write(`error: ${oneLine(error.message)}\n`);
    this.exit(1);
  }
}
