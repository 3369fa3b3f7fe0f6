// The same command declarations as oclif Commands: oclif prints every help text and handles
// every command line the fast parser (cli/parse.ts) leaves to it — with the one-line errors and
// exit codes of cli/errors.ts. Loaded only on that slow path (package.json → oclif.commands).
import { Args, Command, Flags, type Interfaces } from "@oclif/core";
import { describeError, usageError } from "./errors.js";
import { execute } from "./runtime.js";
import { connectionFlags, type ArgSpec, type CommandSpec, type FlagSpec } from "./spec.js";

/** Only the options a declaration sets, so oclif sees exactly what the command declared. */
function defined<T extends object>(options: T): T {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as T;
}

function toFlag(spec: FlagSpec): Interfaces.Flag<any> {
  const { type, __value, ...options } = spec;
  const common = defined(options) as any;
  if (type === "boolean") return Flags.boolean(common);
  if (type === "integer") return Flags.integer(common);
  return Flags.string(common);
}

function toArg(spec: ArgSpec): Interfaces.Arg<any> {
  const { type, __value, ...options } = spec;
  return type === "integer" ? Args.integer(defined(options) as any) : Args.string(defined(options) as any);
}

const mapValues = <T, U>(record: Record<string, T> | undefined, map: (value: T) => U): Record<string, U> =>
  Object.fromEntries(Object.entries(record ?? {}).map(([key, value]) => [key, map(value)]));

const baseFlags = mapValues(connectionFlags as Record<string, FlagSpec>, toFlag);

export function toOclifCommand(spec: CommandSpec): Command.Class {
  return class extends Command {
    static override summary = spec.summary;
    static override description = spec.description;
    static override examples = spec.examples as Command.Example[];
    static override baseFlags = spec.connection ? baseFlags : {};
    static override flags = mapValues(spec.flags, toFlag);
    static override args = mapValues(spec.args, toArg);

    async run(): Promise<void> {
      let parsed: { args: Record<string, unknown>; flags: Record<string, unknown> };
      try {
        parsed = await this.parse(this.constructor as Command.Class);
      } catch (error) {
        // Every failure while reading the command line is a usage error, also from our own parsers.
        const { line, exitCode } = describeError(usageError(error instanceof Error ? error.message : String(error)));
        process.stderr.write(`${line}\n`);
        process.exitCode = exitCode;
        return;
      }
      process.exitCode = await execute(spec, parsed);
    }
  };
}
