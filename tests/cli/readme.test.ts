// Every `ze-harness …` command line the README shows in its code blocks is one the CLI accepts, so
// README and CLI cannot drift. A line is expanded into every command line it stands for — each
// `a|b` alternative, each optional `[…]` group left out and put in (nested groups with it), each
// placeholder (`<SESSION_ID>`, `N`, `PATH`, …) replaced by a sample value — and each of them must
// name a command and pass oclif's own parser in strict mode (oclif is what words a refusal such as
// `Unexpected argument`), or be the root forms (`ze-harness`, `--help`, `-s ID`).
import { extractGlobalFlags, type GlobalFlags } from "../../cli/global-flags.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Parser } from "@oclif/core";
import { describe, expect, it } from "vitest";
import { toOclifCommand } from "../../cli/oclif.js";
import { connectionFlags } from "../../cli/spec.js";
import { isCommandId, isTopic, loadCommand } from "../../cli/table.js";
import { repoRoot } from "../support/harness.js";

const UUID = "550e8400-e29b-41d4-a716-446655440000";

/** Sample values of the README's placeholders. */
const SAMPLES: Record<string, string> = {
  N: "5",
  SEQ: "3",
  SEQUENCE: "3",
  REV: "2",
  "SEQ.IDX": "3.0",
  "SEQ.IDX:FIELD:BYTE": "3.0:body:0",
  // `SEQUENCE[:ORDINAL]`, read before the line is split into groups.
  "SEQUENCE:ORDINAL": "3:0",
  "PROVIDER/MODEL": "openai/gpt-5",
  PATH: "src",
  TEXT: "some text",
  QUERY: "needle",
  URL: "http://127.0.0.1:4317",
  T: "token",
  DIR: "/tmp",
  ORIGIN: "http://127.0.0.1:3000",
};

function sample(token: string): string {
  if (token.startsWith(QUOTED)) return token.slice(1);
  const bare = token.replace(/^<(.*)>$/, "$1");
  if (SAMPLES[bare] !== undefined) return SAMPLES[bare]!;
  if (/^([A-Z]+_)*ID$/.test(bare)) return UUID;
  return token;
}

/** A quoted word is a literal value: no group, alternative or placeholder in it. */
const QUOTED = "\u0000";

/** Shell words of a line (single and double quotes, no escapes needed by the README); quoted ones marked. */
function words(line: string): string[] {
  const out: string[] = [];
  for (const match of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) out.push(match[3] ?? `${QUOTED}${match[1] ?? match[2]}`);
  return out;
}

/** The README's `ze-harness …` lines in code blocks, without `npx`, comments or what precedes `&&`. */
export function readmeCommandLines(readme: string): string[] {
  const lines: string[] = [];
  let inBlock = false;
  for (const raw of readme.split("\n")) {
    if (raw.startsWith("```")) {
      inBlock = !inBlock;
      continue;
    }
    if (!inBlock) continue;
    const segment = raw.split("&&").map((part) => part.trim()).find((part) => /^(npx )?ze-harness( |$)/.test(part));
    if (!segment) continue;
    // A comment starts at " # " outside quotes (the README puts none inside them).
    const comment = segment.search(/\s#\s|\s#$/);
    lines.push((comment < 0 ? segment : segment.slice(0, comment)).replace(/^npx /, "").trim());
  }
  return lines;
}

type Part = { kind: "word"; text: string } | { kind: "optional"; parts: Part[] };

/** Parses `[…]` groups (nested) into parts. */
function parts(tokens: string[]): Part[] {
  const stack: Part[][] = [[]];
  for (let token of tokens) {
    // A quoted word is a value, not a group.
    if (SAMPLES[token] !== undefined || token.startsWith(QUOTED)) {
      stack.at(-1)!.push({ kind: "word", text: token });
      continue;
    }
    while (token.startsWith("[")) {
      stack.push([]);
      token = token.slice(1);
    }
    let closes = 0;
    while (token.endsWith("]")) {
      closes += 1;
      token = token.slice(0, -1);
    }
    if (token !== "") stack.at(-1)!.push({ kind: "word", text: token });
    for (; closes > 0; closes--) {
      const group = stack.pop()!;
      stack.at(-1)!.push({ kind: "optional", parts: group });
    }
  }
  if (stack.length !== 1) throw new Error(`unbalanced [ ] in ${tokens.join(" ")}`);
  return stack[0]!;
}

/** Every token sequence the parts stand for: each optional group out and in; `a | b` inside a group as separate choices. */
function expand(list: Part[]): string[][] {
  let results: string[][] = [[]];
  for (const part of list) {
    if (part.kind === "word") {
      results = results.map((result) => [...result, part.text]);
      continue;
    }
    // `[--after X | --row Y | --event Z]`: one choice per alternative.
    const choices: Part[][] = [[]];
    for (const inner of part.parts) {
      if (inner.kind === "word" && inner.text === "|") choices.push([]);
      else choices.at(-1)!.push(inner);
    }
    const variants = choices.flatMap((choice) => expand(choice));
    results = results.flatMap((result) => [result, ...variants.map((variant) => [...result, ...variant])]);
  }
  return results;
}

/** `a|b|c` words → one command line per alternative (a cross product over the words that have them). */
function alternatives(tokens: string[]): string[][] {
  let results: string[][] = [[]];
  for (const token of tokens) {
    const options = /^-/.test(token) || SAMPLES[token] !== undefined || token.startsWith(QUOTED) || !token.includes("|") ? [token] : token.split("|");
    results = results.flatMap((result) => options.map((option) => [...result, option]));
  }
  return results;
}

const GLOBAL = connectionFlags as Record<string, { readonly type: string }>;

/** Why `argv` (after `ze-harness`) is not a command line the CLI accepts, or undefined when it is. */
async function refusal(line: string[]): Promise<string | undefined> {
  // The global flags (`-v`, `--completions SHELL`, `--wizard`, `--log-level LEVEL`) go first, as main.ts takes them.
  let global: GlobalFlags;
  try {
    global = extractGlobalFlags(line.slice(0, line.includes(">") ? line.indexOf(">") : undefined));
  } catch (error) {
    return (error as Error).message.split("\n")[0];
  }
  if (global.version || global.completions !== undefined) return global.rest.length === 0 ? undefined : `${line.join(" ")}: takes no command`;
  const argv = [...global.rest];
  let index = 0;
  const globals: string[] = [];
  while (index < argv.length && argv[index]!.startsWith("--") && Object.hasOwn(GLOBAL, argv[index]!.slice(2))) {
    const takesValue = GLOBAL[argv[index]!.slice(2)]!.type !== "boolean";
    globals.push(...argv.slice(index, index + (takesValue ? 2 : 1)));
    index += takesValue ? 2 : 1;
  }
  const commandWords: string[] = [];
  while (index < argv.length && !argv[index]!.startsWith("-")) {
    const id = [...commandWords, argv[index]!].join(":");
    if (!isCommandId(id) && !isTopic(id)) break;
    commandWords.push(argv[index]!);
    index += 1;
    if (isCommandId(id)) break;
  }
  const id = commandWords.join(":");
  const rest = argv.slice(index);
  if (!isCommandId(id)) {
    if (id === "" && (rest.length === 0 || (rest.length === 1 && rest[0] === "--help") || (rest[0] === "-s" && rest.length === 2))) return undefined;
    return `no command ${JSON.stringify(commandWords.join(" ") || argv[index] || "")}`;
  }
  const command = toOclifCommand(await loadCommand(id));
  try {
    await Parser.parse([...globals, ...rest], { flags: { ...command.baseFlags, ...command.flags }, args: command.args, strict: true });
    return undefined;
  } catch (error) {
    return (error as Error).message.split("\n")[0];
  }
}

/** Every command line a README line stands for. */
function commandLinesOf(line: string): string[][] {
  const tokens = words(line.replaceAll("SEQUENCE[:ORDINAL]", "SEQUENCE:ORDINAL")).slice(1);
  return expand(parts(tokens)).flatMap(alternatives).map((argv) => argv.map(sample));
}

const readme = readFileSync(join(repoRoot, "README.md"), "utf8");

describe("README command lines", () => {
  it("finds the README's command lines", () => {
    const lines = readmeCommandLines(readme);
    expect(lines.length).toBeGreaterThan(40);
    expect(lines).toContain("ze-harness files list SESSION_ID [PATH]");
  });

  it("expands alternatives, optional groups and placeholders", () => {
    expect(commandLinesOf("ze-harness turn show|cancel <SESSION_ID> <TURN_ID>")).toEqual([
      ["turn", "show", UUID, UUID],
      ["turn", "cancel", UUID, UUID],
    ]);
    expect(commandLinesOf("ze-harness runtime models [--refresh [--provider ID]]")).toEqual([
      ["runtime", "models"],
      ["runtime", "models", "--refresh"],
      ["runtime", "models", "--refresh", "--provider", UUID],
    ]);
    expect(commandLinesOf("ze-harness session history SESSION_ID [--after SEQ.IDX | --row SEQ.IDX]")).toEqual([
      ["session", "history", UUID],
      ["session", "history", UUID, "--after", "3.0"],
      ["session", "history", UUID, "--row", "3.0"],
    ]);
  });

  it("tells a refused command line, as oclif words it", async () => {
    expect(await refusal(["files", "list", UUID, "src", "extra"])).toMatch(/Unexpected argument/);
    expect(await refusal(["frobnicate"])).toMatch(/no command/);
    expect(await refusal(["session"])).toMatch(/no command/);
  });

  it("every README command line is one the CLI accepts", async () => {
    const refused: string[] = [];
    for (const line of readmeCommandLines(readme)) {
      for (const argv of commandLinesOf(line)) {
        const why = await refusal(argv);
        if (why !== undefined) refused.push(`${line}\n    → ze-harness ${argv.join(" ")}: ${why}`);
      }
    }
    expect(refused).toEqual([]);
  });
});
