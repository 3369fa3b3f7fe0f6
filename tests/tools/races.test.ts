// Issue 17 §4: the workdir is a boundary at the moment of access. A real swapper process turns
// `race/` into a symlink to a directory outside the workdir and back in a tight loop while the
// file tools act on paths through it, as Core runs them (permissions, then execute with the
// projections). A call whose projection names the outside target asks `external_directory` and
// is not run (the user decides); every other call must touch only the workdir: no outside bytes
// returned, no file created or changed outside, no outside content brought in, no temporary file
// left behind anywhere.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { editTool, readTool, writeTool, ToolFailure, type ToolDefinition, type ToolOutput } from "../../services/tools/index.js";
import { startSwapper } from "../workspace-files/swapper.js";
import { context, workspace, type Workspace } from "./helpers.js";

const SECRET = "OUTSIDE-SECRET TOKEN\n";
const TRIES = 1000;

let ws: Workspace;
beforeEach(() => {
  ws = workspace();
  mkdirSync(join(ws.workdir, "race"));
  writeFileSync(join(ws.workdir, "race", "f"), "inside TOKEN\n");
  writeFileSync(join(ws.outside, "f"), SECRET);
});
afterEach(() => ws.dispose());

interface Tally {
  escapes: number;
  asked: number;
  refused: number;
  ran: number;
}

/** One call as Core makes it: an `external_directory` projection is an ask (not run here). */
async function attempt<I>(tool: ToolDefinition<I>, input: I, tally: Tally): Promise<ToolOutput | undefined> {
  const ctx = context(ws.workdir);
  let projections;
  try {
    projections = tool.permissions(input, ctx);
  } catch (error) {
    if (!(error instanceof ToolFailure)) throw error;
    tally.refused++;
    return undefined;
  }
  if (projections.some((p) => p.action === "external_directory")) {
    tally.asked++;
    return undefined;
  }
  try {
    const output = await tool.execute(input, { ...ctx, permissions: projections });
    tally.ran++;
    return output;
  } catch (error) {
    if (!(error instanceof ToolFailure)) throw error;
    tally.refused++;
    return undefined;
  }
}

/** Runs `tries` attempts with the swapper running; resolves with the tally and the swaps made. */
async function underSwapper(tries: number, each: (i: number, tally: Tally) => Promise<void>): Promise<Tally & { swaps: number }> {
  const tally: Tally = { escapes: 0, asked: 0, refused: 0, ran: 0 };
  const swapper = await startSwapper(join(ws.workdir, "race"), ws.outside);
  try {
    for (let i = 0; i < tries; i++) await each(i, tally);
  } finally {
    const swaps = await swapper.stop();
    Object.assign(tally, { swaps });
  }
  return tally as Tally & { swaps: number };
}

/** Every file below `dir` (symlinks not followed), relative. */
function filesBelow(dir: string, prefix = ""): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) found.push(...filesBelow(join(dir, entry.name), relative));
    else if (!entry.isSymbolicLink()) found.push(relative);
  }
  return found;
}

/** Outside files other than `f` (created through the symlink), removed so each counts once. */
function createdOutside(): string[] {
  const extra = readdirSync(ws.outside).filter((name) => name !== "f");
  for (const name of extra) rmSync(join(ws.outside, name), { recursive: true, force: true });
  return extra;
}

/** Whether the outside file changed (put back so each counts once). */
function outsideChanged(): boolean {
  if (readFileSync(join(ws.outside, "f"), "utf8") === SECRET) return false;
  writeFileSync(join(ws.outside, "f"), SECRET);
  return true;
}

const textOf = (output: ToolOutput | undefined): string => (output === undefined ? "" : JSON.stringify(output.result));

describe("file tools against a directory swapped for an outside symlink", () => {
  it("read never returns the outside file", async () => {
    const result = await underSwapper(TRIES, async (_, tally) => {
      const output = await attempt(readTool, { filePath: "race/f" }, tally);
      if (textOf(output).includes("OUTSIDE-SECRET")) tally.escapes++;
    });
    expect(result.swaps).toBeGreaterThan(0);
    expect(result).toMatchObject({ escapes: 0 });
  });

  it("read of the directory never lists the outside directory", async () => {
    writeFileSync(join(ws.outside, "outside-only.txt"), "");
    const result = await underSwapper(TRIES, async (_, tally) => {
      const output = await attempt(readTool, { filePath: "race" }, tally);
      if (textOf(output).includes("outside-only.txt")) tally.escapes++;
    });
    expect(result.swaps).toBeGreaterThan(0);
    expect(result).toMatchObject({ escapes: 0 });
  });

  it("write never creates a file outside and leaves no temporary file", async () => {
    const result = await underSwapper(TRIES, async (i, tally) => {
      await attempt(writeTool, { filePath: `race/new-${i}.txt`, content: "written\n" }, tally);
      tally.escapes += createdOutside().length;
    });
    expect(result.swaps).toBeGreaterThan(0);
    expect(result).toMatchObject({ escapes: 0 });
    expect(filesBelow(ws.outside)).toEqual(["f"]);
    const leftovers = filesBelow(ws.workdir).filter((path) => !/(^|\/)(f|new-\d+\.txt)$/.test(path));
    expect(leftovers).toEqual([]);
  });

  it("edit never changes the outside file nor brings its content in", async () => {
    const result = await underSwapper(TRIES, async (_, tally) => {
      await attempt(editTool, { filePath: "race/f", oldString: "TOKEN", newString: "TOKEN.", replaceAll: true }, tally);
      if (outsideChanged()) tally.escapes++;
      tally.escapes += createdOutside().length;
    });
    expect(result.swaps).toBeGreaterThan(0);
    expect(result).toMatchObject({ escapes: 0 });
    const inside = filesBelow(ws.workdir);
    expect(inside.filter((path) => readFileSync(join(ws.workdir, path), "utf8").includes("OUTSIDE"))).toEqual([]);
    expect(inside.filter((path) => !/(^|\/)f$/.test(path))).toEqual([]);
    expect(statSync(join(ws.workdir, "race", "f")).isFile()).toBe(true);
  });
});
