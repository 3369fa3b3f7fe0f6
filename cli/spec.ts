// How a command is declared: its help texts, arguments and flags as plain data (the same options
// oclif's Flags and Args take), and its run(). No oclif here: the fast path (cli/main.ts) parses
// these declarations itself, and cli/oclif.ts turns the same declarations into oclif Commands
// for help, completions and every command line the fast parser leaves to oclif.
import type { Connection, ConnectOptions } from "./base.js";

interface FlagOptions {
  readonly description: string;
  /** A one-letter alias (`-s`). */
  readonly char?: string;
  readonly helpGroup?: string;
  readonly env?: string;
  readonly exclusive?: readonly string[];
}

export interface FlagSpec<T = unknown> extends FlagOptions {
  readonly type: "string" | "boolean" | "integer";
  readonly default?: string | number;
  readonly multiple?: boolean;
  readonly multipleNonGreedy?: boolean;
  readonly options?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  readonly parse?: (input: string) => Promise<string>;
  /** Only carries the parsed value's type. */
  readonly __value?: T;
}

export interface ArgSpec<T = unknown> {
  readonly type: "string" | "integer";
  readonly name?: string;
  readonly description: string;
  /** false: the argument may be left out (then it is undefined); only the last ones may be. */
  readonly required: boolean;
  readonly options?: readonly string[];
  readonly min?: number;
  readonly parse?: (input: string) => Promise<string>;
  readonly __value?: T;
}

type StringFlagOptions = FlagOptions & { readonly options?: readonly string[]; readonly parse?: (input: string) => Promise<string> };

function stringFlag(options: StringFlagOptions & { readonly default: string }): FlagSpec<string>;
function stringFlag(options: StringFlagOptions & { readonly multiple: true; readonly multipleNonGreedy?: boolean }): FlagSpec<string[] | undefined>;
function stringFlag(options: StringFlagOptions): FlagSpec<string | undefined>;
function stringFlag(options: StringFlagOptions & { readonly default?: string; readonly multiple?: boolean }): FlagSpec {
  return { type: "string", ...options };
}

function integerFlag(options: FlagOptions & { readonly default: number; readonly min?: number; readonly max?: number }): FlagSpec<number>;
function integerFlag(options: FlagOptions & { readonly min?: number; readonly max?: number }): FlagSpec<number | undefined>;
function integerFlag(options: FlagOptions & { readonly default?: number; readonly min?: number; readonly max?: number }): FlagSpec {
  return { type: "integer", ...options };
}

export const flag = {
  string: stringFlag,
  integer: integerFlag,
  /** Absent means undefined, as with oclif. */
  boolean: (options: FlagOptions): FlagSpec<boolean | undefined> => ({ type: "boolean", ...options }),
};

export const arg = {
  string: (options: Omit<ArgSpec, "type" | "__value" | "min">): ArgSpec<string> => ({ type: "string", ...options }),
  integer: (options: Omit<ArgSpec, "type" | "__value" | "options" | "parse">): ArgSpec<number> => ({ type: "integer", ...options }),
};

export type FlagSpecs = Record<string, FlagSpec>;
export type ArgSpecs = Record<string, ArgSpec>;
export type Values<S> = { [K in keyof S]: S[K] extends { __value?: infer T } ? T : never };

/** What run() gets: the parsed command line and the few things every command shares. */
export interface Context<A, F> {
  readonly args: A;
  readonly flags: F;
  /** Opens the connection (embedded or --remote); closed by the runtime after run(). Connection commands only. */
  connect(options?: ConnectOptions): Promise<Connection>;
  printJson(value: unknown): void;
}

export interface CommandSpec<A extends ArgSpecs = ArgSpecs, F extends FlagSpecs = FlagSpecs> {
  readonly summary: string;
  readonly description?: string;
  readonly examples?: readonly string[];
  readonly args?: A;
  readonly flags?: F;
  /** Takes the connection flags (--remote, --server, --token, --embedded, --database, --config). */
  readonly connection?: boolean;
  /** Resolves with the exit code (0 when it returns nothing). */
  run(context: Context<Values<A>, Values<F> & ConnectionValues>): Promise<number | void>;
}

/** Declares a command (the identity function, for type inference). */
export function defineCommand<A extends ArgSpecs = {}, F extends FlagSpecs = {}>(spec: CommandSpec<A, F>): CommandSpec<A, F> {
  return spec;
}

/** The flags every connection command takes, wherever they stand on the command line. */
export const connectionFlags = {
  remote: flag.string({ description: "Base URL of a remote Ze Harness server (e.g. http://127.0.0.1:4317).", helpGroup: "CONNECTION" }),
  server: flag.string({ description: "Select a server (default: local); requires --remote.", helpGroup: "CONNECTION" }),
  token: flag.string({ description: "Bearer token for the server (or ZE_HARNESS_TOKEN).", env: "ZE_HARNESS_TOKEN", helpGroup: "CONNECTION" }),
  embedded: flag.boolean({ description: "Run in-process against the local database, without a daemon.", helpGroup: "CONNECTION", exclusive: ["remote"] }),
  database: flag.string({ description: "Database: a path, :memory:, or a libsql:// or http(s):// URL (or ZE_HARNESS_DB).", helpGroup: "CONNECTION" }),
  config: flag.string({ description: "Config file to use instead of the nearest ze-harness.config.json; unavailable with --remote.", helpGroup: "CONNECTION" }),
  "mcp-callback-port": flag.integer({ description: "Listen locally for MCP OAuth callbacks on this port (an --embedded host's; default 19876).", min: 1, max: 65535, helpGroup: "CONNECTION" }),
};

export type ConnectionValues = Partial<Values<typeof connectionFlags>>;
