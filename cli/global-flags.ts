// The reference's GLOBAL FLAGS, which every command line takes wherever they stand (before `--`):
// `--version, -v`, `--wizard`, `--completions <bash|zsh|fish|sh>` and `--log-level <…>`.
// cli/main.ts takes them out of argv first (extractGlobalFlags); cli/help.ts lists them in the
// root help. `--help, -h` stays oclif's. Imports nothing heavy.
import { usageError } from "./errors.js";

/** Where `--log-level` goes: the environment every logger reads (services/daemon/log.ts, same name). */
export const LOG_LEVEL_VARIABLE = "ZE_HARNESS_LOG_LEVEL";

export const COMPLETION_SHELLS = ["bash", "zsh", "fish", "sh"] as const;
export const LOG_LEVEL_CHOICES = ["all", "trace", "debug", "info", "warn", "warning", "error", "fatal", "none"] as const;

/** The root help's FLAGS section: the connection flags every connected command takes (before or after it), and the TUI's --resume. */
export const ROOT_FLAG_ROWS: readonly (readonly [string, string])[] = [
  ["--remote string", "Connect to a remote Harness instead of the local daemon"],
  ["--embedded", "Run in-process instead of using the local daemon"],
  ["--resume, -s string", "Resume an existing Session in the TUI"],
  ["--server string", "Select a server; requires --remote"],
  ["--token string", "Authenticate to a remote Harness with a bearer token"],
  ["--config string", "Use a local configuration file; unavailable with --remote"],
  ["--database string", "Use a local SQLite database path or ':memory:'"],
  ["--mcp-callback-port string", "Listen locally for MCP OAuth callbacks"],
];

/** The root help's GLOBAL FLAGS section: [flag, description] rows. */
export const GLOBAL_FLAG_ROWS: readonly (readonly [string, string])[] = [
  ["--help, -h", "Show help information"],
  ["--version, -v", "Show version information"],
  ["--wizard", "Start wizard mode for a command"],
  [`--completions <${COMPLETION_SHELLS.join("|")}>`, `Print shell completion script (choices: ${COMPLETION_SHELLS.join(", ")})`],
  [`--log-level <${LOG_LEVEL_CHOICES.join("|")}>`, `Sets the minimum log level (choices: ${LOG_LEVEL_CHOICES.join(", ")})`],
];

export interface GlobalFlags {
  readonly version: boolean;
  readonly wizard: boolean;
  readonly completions?: string | undefined;
  readonly logLevel?: string | undefined;
  /** argv without them. */
  readonly rest: readonly string[];
}

function choice(name: string, value: string | undefined, choices: readonly string[]): string {
  if (value === undefined || value === "" || value.startsWith("-")) throw usageError(`${name} needs a value: one of ${choices.join(", ")}`);
  if (!choices.includes(value)) throw usageError(`Expected ${name} to be one of: ${choices.join(", ")}, not ${JSON.stringify(value)}`);
  return value;
}

/**
 * Takes the global flags out of argv (up to `--`). `-v` counts only before the command words
 * are over (a command's own `-v` is left alone): it must be the first argument.
 */
export function extractGlobalFlags(argv: readonly string[]): GlobalFlags {
  let version = false;
  let wizard = false;
  let completions: string | undefined;
  let logLevel: string | undefined;
  const rest: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const token = argv[index]!;
    if (token === "--") {
      rest.push(...argv.slice(index));
      break;
    }
    const equals = token.indexOf("=");
    const name = token.startsWith("--") ? token.slice(0, equals < 0 ? undefined : equals) : token;
    const inline = token.startsWith("--") && equals >= 0 ? token.slice(equals + 1) : undefined;
    const value = (): string | undefined => {
      if (inline !== undefined) return inline;
      index += 1;
      return argv[index];
    };
    if (name === "--version" || (token === "-v" && index === 0)) version = true;
    else if (name === "--wizard" && inline === undefined) wizard = true;
    else if (name === "--completions") completions = choice("--completions", value(), COMPLETION_SHELLS);
    else if (name === "--log-level") logLevel = choice("--log-level", value(), LOG_LEVEL_CHOICES);
    else rest.push(token);
  }
  return { version, wizard, completions, logLevel, rest };
}
