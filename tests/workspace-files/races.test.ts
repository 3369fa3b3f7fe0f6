// Issue 17 §4 for the workspace observation and the Turn snapshot: a real swapper process turns
// `race/` into a symlink to a directory outside the workdir and back in a tight loop while
// files/content, the listing, a watch, the snapshot scan, nested AGENTS.md discovery and the
// rewind's reads and writes act on paths through it. None may return, record, change or remove anything
// outside the workdir.
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { currentDigest, restore } from "../../services/core/rewind/restore.js";
import { listFiles } from "../../services/workspace/files/list.js";
import { decodeWorkspacePath } from "../../services/workspace/files/path.js";
import { captureFile } from "../../services/workspace/files/read.js";
import { resolveDirectory } from "../../services/workspace/files/resolve.js";
import { watchDirectory } from "../../services/workspace/files/watch.js";
import { statScan } from "../../services/workspace/files/snapshot.js";
import { discoverNestedInstructions } from "../../services/workspace/instructions.js";
import { b64 } from "./repos.js";
import { startSwapper } from "./swapper.js";

const SECRET = "OUTSIDE-SECRET\n";
const SECRET_SHA = createHash("sha256").update(SECRET).digest("hex");

let root: string;
let workdir: string;
let outside: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "ze-races-")));
  workdir = join(root, "work");
  outside = join(root, "outside");
  mkdirSync(join(workdir, "race"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(workdir, "race", "f"), "inside\n");
  writeFileSync(join(workdir, "race", "inside-only.txt"), "inside\n");
  writeFileSync(join(outside, "f"), SECRET);
  writeFileSync(join(outside, "outside-only.txt"), SECRET);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

interface Tally {
  escapes: number;
  refused: number;
  tries: number;
  swaps: number;
}

/** Runs `each` `tries` times with the swapper running. */
async function underSwapper(tries: number, each: (i: number, tally: Tally) => Promise<void>): Promise<Tally> {
  const tally: Tally = { escapes: 0, refused: 0, tries, swaps: 0 };
  const swapper = await startSwapper(join(workdir, "race"), outside);
  try {
    for (let i = 0; i < tries; i++) await each(i, tally);
  } finally {
    tally.swaps = await swapper.stop();
  }
  return tally;
}

/** The inodes this process's inotify descriptors watch (from /proc/self/fdinfo). */
function watchedInodes(): number[] {
  const inodes: number[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    if (target !== "anon_inode:inotify") continue;
    for (const match of readFileSync(`/proc/self/fdinfo/${fd}`, "utf8").matchAll(/^inotify wd:\S+ ino:([0-9a-f]+)/gm)) inodes.push(parseInt(match[1]!, 16));
  }
  return inodes;
}

/** Counts a typed refusal; anything else fails the test. */
async function refusedOr<T>(tally: Tally, run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    tally.refused++;
    return undefined;
  }
}

describe("workspace access against a directory swapped for an outside symlink", () => {
  it("files/content never serves outside bytes", async () => {
    const path = decodeWorkspacePath(b64("race/f"));
    const result = await underSwapper(6000, async (_, tally) => {
      const items = (await refusedOr(tally, () => captureFile(workdir, path, undefined))) ?? [];
      const bytes = Buffer.concat(items.flatMap((item) => (item.type === "file.chunk" ? [Buffer.from(item.bytesBase64, "base64")] : [])));
      if (bytes.toString("utf8").includes("OUTSIDE")) tally.escapes++;
    });
    expect(result.swaps).toBeGreaterThan(0);
    expect(result).toMatchObject({ escapes: 0 });
  });

  it("the listing never lists the outside directory", async () => {
    const result = await underSwapper(3000, async (_, tally) => {
      const page = await refusedOr(tally, () => listFiles(workdir, b64("race"), undefined));
      if (page?.entries.some((entry) => Buffer.from(entry.path.bytesBase64, "base64").toString("utf8").endsWith("outside-only.txt"))) tally.escapes++;
    });
    expect(result.swaps).toBeGreaterThan(0);
    expect(result).toMatchObject({ escapes: 0 });
  });

  it("the Turn recording scan never names an outside file", async () => {
    const canonical = realpathSync(workdir);
    const result = await underSwapper(1000, async (_, tally) => {
      const entries = (await refusedOr(tally, () => statScan(canonical))) ?? [];
      const outsideNamed = entries.some((entry) => Buffer.from(entry[0], "base64").toString("utf8").endsWith("outside-only.txt"));
      if (outsideNamed || entries.some((entry) => entry[1] === SECRET_SHA)) tally.escapes++;
    });
    expect(result.swaps).toBeGreaterThan(0);
    expect(result).toMatchObject({ escapes: 0 });
  });

  it("nested AGENTS.md discovery after a read never attaches the outside file", async () => {
    writeFileSync(join(workdir, "race", "AGENTS.md"), "inside rules\n");
    writeFileSync(join(outside, "AGENTS.md"), SECRET);
    const result = await underSwapper(3000, async (_, tally) => {
      const found = await discoverNestedInstructions(workdir, join(workdir, "race", "f"), { isDirectory: false });
      if (found.some((file) => file._tag === "InstructionFile" && file.content.includes("OUTSIDE"))) tally.escapes++;
      if (found.some((file) => file._tag === "InstructionFileInvalid")) tally.refused++;
    });
    expect(result.swaps).toBeGreaterThan(0);
    expect(result).toMatchObject({ escapes: 0 });
  });

  it("a watch never watches the outside directory", async () => {
    const outsideInode = statSync(outside).ino;
    const result = await underSwapper(3000, async (_, tally) => {
      const directory = await refusedOr(tally, () => resolveDirectory(workdir, b64("race")));
      if (!directory) return;
      const watch = watchDirectory(directory, undefined, { checkMs: 60_000, heartbeatMs: 60_000 });
      try {
        const first = await refusedOr(tally, () => watch.next());
        // What the kernel watches now, read from the inotify descriptors' fdinfo.
        if (first?.value?.type === "files.ready" && watchedInodes().includes(outsideInode)) tally.escapes++;
        if (first?.value?.type === "files.unavailable") tally.refused++;
      } finally {
        await watch.return(undefined);
      }
    });
    expect(result.swaps).toBeGreaterThan(0);
    expect(result).toMatchObject({ escapes: 0 });
  });

  it("a rewind never reads, writes or removes outside files", async () => {
    const tries = 500;
    for (let i = 0; i < tries; i++) {
      writeFileSync(join(workdir, "race", `del-${i}`), "inside\n");
      writeFileSync(join(outside, `del-${i}`), SECRET);
    }
    const result = await underSwapper(tries, async (i, tally) => {
      // The check before restoring: the digest of what is there.
      const digest = await refusedOr(tally, () => currentDigest(workdir, Buffer.from("race/f")));
      if (digest === SECRET_SHA) tally.escapes++;
      // Putting a file back, and removing one the Turns added.
      await refusedOr(tally, () => restore(workdir, Buffer.from(`race/new-${i}`), { bytes: Buffer.from("restored\n"), mode: 0o100644 }));
      await refusedOr(tally, () => restore(workdir, Buffer.from(`race/del-${i}`), undefined));
      if (existsSync(join(outside, `new-${i}`))) tally.escapes++;
      if (!existsSync(join(outside, `del-${i}`))) tally.escapes++;
    });
    expect(result.swaps).toBeGreaterThan(0);
    expect(result).toMatchObject({ escapes: 0 });
    expect(readdirSync(outside).filter((name) => !/^(f|outside-only\.txt|del-\d+)$/.test(name))).toEqual([]);
    expect(readFileSync(join(outside, "f"), "utf8")).toBe(SECRET);
  });
});
