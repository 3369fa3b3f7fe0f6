// The CLI's entry (bin/ze-harness.js imports it from the bundle, dist/bundle/main.js). It finds
// the command in argv, loads only that command, parses the command line itself and runs it —
// no oclif, no command table. Help, topics and every command line the fast parser does not
// fully understand (a usage error to word, a flag it does not know) go to oclif, which prints
// them exactly as it always has. Global connection flags may stand before the command.
import { quietOnClosedStdout } from "./closed-stdout.js";
import { describeError, usageError } from "./errors.js";
import { extractGlobalFlags, LOG_LEVEL_VARIABLE, type GlobalFlags } from "./global-flags.js";
import { parseCommandLine } from "./parse.js";
import { execute, exitWhenFlushed } from "./runtime.js";
import { connectionFlags } from "./spec.js";
import { isCommandId, isTopic, loadCommand } from "./table.js";

interface CommandLine {
  /** The command (or topic) words, e.g. ["session", "list"]. */
  readonly words: readonly string[];
  /** Connection flags given before the command, with their values. */
  readonly globals: readonly string[];
  /** Everything after the command words. */
  readonly rest: readonly string[];
}

const GLOBAL_FLAGS = connectionFlags as Record<string, { readonly type: string }>;

/** Splits argv into leading connection flags, the command words and the rest. */
export function splitCommandLine(argv: readonly string[]): CommandLine {
  let index = 0;
  const globals: string[] = [];
  while (index < argv.length && argv[index]!.startsWith("--")) {
    const token = argv[index]!;
    const equals = token.indexOf("=");
    const name = token.slice(2, equals < 0 ? undefined : equals);
    if (!Object.hasOwn(GLOBAL_FLAGS, name)) break;
    const takesValue = GLOBAL_FLAGS[name]!.type !== "boolean" && equals < 0;
    globals.push(...argv.slice(index, index + (takesValue ? 2 : 1)));
    index += takesValue ? 2 : 1;
  }
  const words: string[] = [];
  while (index < argv.length && !argv[index]!.startsWith("-")) {
    const id = [...words, argv[index]!].join(":");
    if (!isCommandId(id) && !isTopic(id)) break;
    words.push(argv[index]!);
    index += 1;
    if (isCommandId(id)) break;
  }
  return { words, globals, rest: argv.slice(index) };
}

async function viaOclif(argv: readonly string[], root: string): Promise<never> {
  const { execute: oclif } = await import("@oclif/core");
  await oclif({ args: [...argv], dir: `${root}/package.json` });
  return exitWhenFlushed(typeof process.exitCode === "number" ? process.exitCode : 0);
}

function usage(message: string): Promise<never> {
  const { line, exitCode } = describeError(usageError(message));
  process.stderr.write(`${line}\n`);
  return exitWhenFlushed(exitCode);
}

/** The flags that open the TUI without naming `tui` (`ze-harness -s ID`, `ze-harness --onboarding`). */
const TUI_FLAGS = new Set(["-s", "--resume", "--workdir", "--no-workdir", "--onboarding"]);

const onTerminal = (): boolean => process.stdin.isTTY === true && process.stdout.isTTY === true;

/** A bare `ze-harness` (connection flags at most) on a terminal, or one led by a TUI flag, opens the TUI. */
function opensTui(words: readonly string[], rest: readonly string[]): boolean {
  if (words.length > 0) return false;
  const first = rest[0];
  if (first === undefined) return onTerminal();
  return TUI_FLAGS.has(first.split("=")[0]!);
}

export async function main(commandLine: readonly string[], root: string): Promise<never> {
  quietOnClosedStdout(); // `… | head -2`: exit 0 quietly, never an EPIPE stack trace
  let global: GlobalFlags;
  try {
    global = extractGlobalFlags(commandLine);
  } catch (error) {
    const { line, exitCode } = describeError(error);
    process.stderr.write(`${line}\n`);
    return exitWhenFlushed(exitCode);
  }
  // Read by every logger this process (and a daemon it starts) creates (services/daemon/log.ts).
  if (global.logLevel !== undefined) process.env[LOG_LEVEL_VARIABLE] = global.logLevel;
  if (global.version) return viaOclif(["--version"], root);
  if (global.completions !== undefined) {
    const extra = global.rest.filter((token) => !token.startsWith("-"));
    if (extra.length > 0) return usage(`--completions prints a script; it takes no command (${extra.join(" ")})`);
    return main(["completions", global.completions], root);
  }
  if (global.wizard) {
    const { runWizard } = await import("./wizard.js");
    const answered = await runWizard(global.rest);
    if (typeof answered === "number") return exitWhenFlushed(answered);
    return main(answered, root);
  }
  const argv = global.rest;
  const split = splitCommandLine(argv);
  const { words, globals, rest } = opensTui(split.words, split.rest) ? { ...split, words: ["tui"] } : split;
  const id = words.join(":");
  const helpRequested = rest.slice(0, rest.includes("--") ? rest.indexOf("--") : undefined).includes("--help");
  if (isCommandId(id)) {
    const normalized = [...globals, ...rest];
    // A key typed after `--api-key` would be echoed by the parser's "Unexpected argument" line
    // (and is in the shell's history already): refuse without repeating it.
    if (id === "provider:add" && inlineSecret(normalized, "--api-key")) {
      process.stderr.write("error: --api-key takes no value: the key is never read from the command line (type it at the prompt, or pipe it on stdin); nothing was written\n");
      return exitWhenFlushed(2);
    }
    const spec = await loadCommand(id);
    const parsed = helpRequested ? undefined : await parseCommandLine(spec, normalized);
    if (!parsed) return viaOclif([...words, ...normalized], root);
    return exitWhenFlushed(await execute(spec, parsed));
  }
  const next = rest[0];
  if (next !== undefined && !next.startsWith("-")) return usage(`command ${[...words, next].join(" ")} not found`);
  if (words.length > 0) return viaOclif([...words, ...globals, ...rest], root); // a topic: its help
  if (next === undefined && globals.length > 0) return usage(`${globals[0]} needs a command after it (see ze-harness --help)`);
  if (next !== undefined && next !== "--help" && next !== "--version") return usage(`command ${next} not found`);
  return viaOclif(rest, root);
}

/** Whether `flag` is given a value on the command line (`--flag=value`, or `--flag value` before `--`). */
function inlineSecret(argv: readonly string[], flag: string): boolean {
  const end = argv.includes("--") ? argv.indexOf("--") : argv.length;
  return argv.slice(0, end).some((token, index) => token.startsWith(`${flag}=`) || (token === flag && argv[index + 1] !== undefined && index + 1 < end && !argv[index + 1]!.startsWith("-")));
}
