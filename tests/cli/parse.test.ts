// The fast path's parser (cli/parse.ts) against oclif's own, for every command: on each command
// line it accepts it must give exactly what oclif gives, and it must leave to oclif every one
// oclif refuses. The plain well-formed lines must take the fast path (or it would never be used).
import { Parser } from "@oclif/core";
import { afterEach, describe, expect, it } from "vitest";
import { toOclifCommand } from "../../cli/oclif.js";
import { flagsOf, parseCommandLine } from "../../cli/parse.js";
import type { ArgSpec, CommandSpec, FlagSpec } from "../../cli/spec.js";
import { commandIds, loadCommand } from "../../cli/table.js";
import { checkShortIds } from "../../cli/short-ids.js";

const UUID = "550E8400-E29B-41D4-A716-446655440000";

function sampleArg(name: string, spec: ArgSpec): string {
  if (spec.options) return spec.options[0]!;
  if (spec.type === "integer") return "2";
  if (/id$/i.test(name)) return UUID;
  return "some text";
}

function sampleValue(name: string, spec: FlagSpec): string {
  if (spec.options) return spec.options[0]!;
  if (spec.type === "integer") return String(spec.min ?? 0) === "0" ? "7" : String((spec.min ?? 0) + 1);
  if (name === "session" || name === "entry" || name === "compaction" || name === "turn" || name === "resume" || name === "terminal") return UUID;
  if (name === "remote") return "http://127.0.0.1:4317";
  return `${name}-value`;
}

interface Case {
  readonly argv: string[];
  /** A plain well-formed line: the fast parser must accept it. */
  readonly fast: boolean;
}

function casesOf(spec: CommandSpec): Case[] {
  const args = Object.entries(spec.args ?? {}).map(([name, arg]) => sampleArg(name, arg));
  const flags = Object.entries(flagsOf(spec));
  const cases: Case[] = [{ argv: args, fast: true }];
  const greedy = (flag: FlagSpec): boolean => flag.multiple === true && flag.multipleNonGreedy !== true;
  for (const [name, flag] of flags) {
    if (flag.type === "boolean") {
      cases.push({ argv: [`--${name}`, ...args], fast: true }, { argv: [...args, `--${name}`], fast: true }, { argv: [...args, `--${name}=true`], fast: false });
      continue;
    }
    const value = sampleValue(name, flag);
    if (flag.char !== undefined) cases.push({ argv: [...args, `-${flag.char}`, value], fast: !greedy(flag) }, { argv: [`-${flag.char}`], fast: false });
    cases.push(
      { argv: [...args, `--${name}`, value], fast: !greedy(flag) },
      { argv: [`--${name}=${value}`, ...args], fast: !greedy(flag) },
      { argv: [...args, `--${name}`, ""], fast: false },
      { argv: [...args, `--${name}`], fast: false },
      { argv: [...args, `--${name}`, "-x"], fast: false },
      { argv: [...args, `--${name}`, value, `--${name}`, value], fast: false },
    );
    if (flag.type === "integer") cases.push({ argv: [...args, `--${name}`, "-1"], fast: false }, { argv: [...args, `--${name}`, "1.5"], fast: false }, { argv: [...args, `--${name}`, "99999"], fast: false });
  }
  // Everything at once (exclusive pairs included), and the lines oclif refuses or reads its own way.
  cases.push({ argv: [...args, ...flags.flatMap(([name, flag]) => (flag.type === "boolean" ? [`--${name}`] : [`--${name}`, sampleValue(name, flag)]))], fast: false });
  cases.push(
    { argv: [...args, "extra"], fast: false },
    { argv: [...args, "--nonexistent"], fast: false },
    { argv: [...args, "-x"], fast: false },
    { argv: ["--", ...args], fast: false },
  );
  if (args.length > 0) {
    cases.push({ argv: args.slice(1), fast: false }, { argv: ["not-a-uuid", ...args.slice(1)], fast: false }, { argv: [...args.slice(0, -1), "-starts-with-a-dash"], fast: false });
  }
  return cases;
}

async function oclifParse(spec: CommandSpec, argv: string[]): Promise<{ args: unknown; flags: unknown } | Error> {
  const command = toOclifCommand(spec);
  try {
    const parsed = await Parser.parse(argv, { flags: { ...command.baseFlags, ...command.flags }, args: command.args, strict: true });
    return { args: parsed.args, flags: parsed.flags };
  } catch (error) {
    return error as Error;
  }
}

afterEach(() => {
  delete process.env["ZE_HARNESS_TOKEN"];
});

describe("the fast parser agrees with oclif's", () => {
  it.each(commandIds)("%s", async (id) => {
    const spec = await loadCommand(id);
    for (const { argv, fast } of casesOf(spec)) {
      const expected = await oclifParse(spec, argv);
      const actual = await parseCommandLine(spec, argv, process.env);
      if (expected instanceof Error) expect(actual, `${JSON.stringify(argv)}: oclif refuses it (${expected.message})`).toBeUndefined();
      else if (actual !== undefined) expect(actual, JSON.stringify(argv)).toEqual(expected);
      if (fast) expect(actual, `${JSON.stringify(argv)} must take the fast path`).toBeDefined();
    }
  });

  it("reads a flag's environment variable as oclif does (set, empty, or overridden on the line)", async () => {
    const spec = await loadCommand("session:list");
    for (const [env, argv] of [["token-from-env", []], ["", []], ["token-from-env", ["--token", "from-the-line"]]] as const) {
      process.env["ZE_HARNESS_TOKEN"] = env;
      const expected = await oclifParse(spec, [...argv]);
      expect(await parseCommandLine(spec, argv, process.env)).toEqual(expected);
    }
  });

  it("canonicalises ids before run (cli/short-ids.ts: a Session id comes back lower-case, and needs no lookup)", async () => {
    const spec = await loadCommand("session:show");
    const parsed = await parseCommandLine(spec, [UUID]);
    expect(checkShortIds(spec, parsed!)).toBeUndefined();
    expect(parsed?.args).toEqual({ sessionId: UUID.toLowerCase() });
  });

  it("leaves an id prefix for resolution once connected, and refuses what is neither", async () => {
    const spec = await loadCommand("session:show");
    const prefixed = await parseCommandLine(spec, ["0BEB6619"]);
    expect(typeof checkShortIds(spec, prefixed!)).toBe("function");
    const wrong = await parseCommandLine(spec, ["0beb661"]);
    expect(() => checkShortIds(spec, wrong!)).toThrow('"0beb661" is not a Session id (a UUID, or a unique prefix of 8 or more hex digits)');
  });
});
