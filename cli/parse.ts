// The fast path's command-line parser. It reads the same declarations oclif does and returns
// what oclif's parser would for the command lines it fully understands; for anything else —
// a problem to report, `--help`, an unknown or repeated flag, a value that looks like a flag,
// a greedy multiple flag — it returns undefined and the command line goes to oclif, which
// parses, validates and words the error exactly as it always has. tests/cli/parse.test.ts holds
// it to oclif's own parser.
import { connectionFlags, type ArgSpec, type CommandSpec, type FlagSpec } from "./spec.js";

export interface Parsed {
  readonly args: Record<string, unknown>;
  readonly flags: Record<string, unknown>;
}

const INTEGER = /^-?\d+$/;

/** Every flag a command takes, connection flags first (as oclif merges base flags). */
export function flagsOf(spec: CommandSpec): Record<string, FlagSpec> {
  return { ...(spec.connection ? connectionFlags : {}), ...(spec.flags ?? {}) };
}

async function parseValue(spec: FlagSpec | ArgSpec, input: string): Promise<unknown> {
  if (spec.options && !spec.options.includes(input)) throw new Error("not an option");
  if (spec.type === "integer") {
    if (!INTEGER.test(input)) throw new Error("not an integer");
    const value = Number.parseInt(input, 10);
    if (spec.min !== undefined && value < spec.min) throw new Error("below min");
    if ("max" in spec && spec.max !== undefined && value > spec.max) throw new Error("above max");
    return value;
  }
  return spec.parse ? spec.parse(input) : input;
}

/** The parsed args and flags, or undefined when oclif must handle this command line. */
export async function parseCommandLine(spec: CommandSpec, argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Parsed | undefined> {
  const flagSpecs = flagsOf(spec);
  const given = new Map<string, string[] | true>();
  const positional: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const token = argv[index]!;
    if (token === "--") {
      positional.push(...argv.slice(index + 1));
      break;
    }
    if (!token.startsWith("-") || token === "-") {
      positional.push(token);
      continue;
    }
    let expanded = token;
    if (!token.startsWith("--")) {
      // A one-letter alias (`-s VALUE`) stands for its flag's long name.
      const alias = /^-([A-Za-z])$/.exec(token)?.[1];
      const long = alias === undefined ? undefined : Object.entries(flagSpecs).find(([, candidate]) => candidate.char === alias)?.[0];
      if (long === undefined) return undefined;
      expanded = `--${long}`;
    }
    const equals = expanded.indexOf("=");
    const name = expanded.slice(2, equals < 0 ? undefined : equals);
    const flag = Object.hasOwn(flagSpecs, name) ? flagSpecs[name] : undefined;
    if (!flag || (flag.multiple && !flag.multipleNonGreedy)) return undefined;
    const previous = given.get(name);
    if (previous !== undefined && !flag.multiple) return undefined;
    if (flag.type === "boolean") {
      if (equals >= 0) return undefined;
      given.set(name, true);
      continue;
    }
    let value: string | undefined;
    if (equals >= 0) value = expanded.slice(equals + 1);
    else {
      value = argv[index + 1];
      index += 1;
    }
    if (value === undefined || value.startsWith("-")) return undefined;
    given.set(name, [...(previous === undefined || previous === true ? [] : previous), value]);
  }

  try {
    const flags: Record<string, unknown> = {};
    for (const [name, flag] of Object.entries(flagSpecs)) {
      const raw = given.get(name);
      if (raw === true) flags[name] = true;
      else if (raw !== undefined) {
        const values = await Promise.all(raw.map((value) => parseValue(flag, value)));
        flags[name] = flag.multiple ? values : values[0];
      } else if (flag.env !== undefined && (env[flag.env] ?? "") !== "") flags[name] = await parseValue(flag, env[flag.env]!);
      else if (flag.default !== undefined) flags[name] = flag.default;
    }
    for (const [name, flag] of Object.entries(flagSpecs)) {
      if (flags[name] !== undefined && (flag.exclusive ?? []).some((other) => flags[other] !== undefined)) return undefined;
    }
    const argSpecs = Object.entries(spec.args ?? {});
    const required = argSpecs.filter(([, argSpec]) => argSpec.required).length;
    if (positional.length < required || positional.length > argSpecs.length) return undefined;
    const args: Record<string, unknown> = {};
    for (const [index, [name, argSpec]] of argSpecs.entries()) if (index < positional.length) args[name] = await parseValue(argSpec, positional[index]!);
    return { args, flags };
  } catch {
    return undefined;
  }
}
