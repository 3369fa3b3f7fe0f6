// The workdir boundary without a race: the rewind's reads, writes and removals refuse a parent
// that is a symlink (never writing or removing through it), restore what is legitimately theirs
// (missing parents made, modes and symlinks put back, no temporary file left), and the snapshot
// records a symlink as a link, never its target's content. The listing and files/content work
// the same on the portable fallback (no /proc/self/fd).
import { Buffer } from "node:buffer";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { currentDigest, restore } from "../../services/core/rewind/restore.js";
import { listFiles } from "../../services/workspace/files/list.js";
import { decodeWorkspacePath } from "../../services/workspace/files/path.js";
import { captureFile } from "../../services/workspace/files/read.js";
import { statScan, sha256Hex } from "../../services/workspace/files/snapshot.js";
import { PathChanged, forceDescriptorPathsForTests } from "../../services/workspace/files/verified.js";
import { b64 } from "./repos.js";

let root: string;
let workdir: string;
let outside: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "ze-boundary-")));
  workdir = join(root, "work");
  outside = join(root, "outside");
  mkdirSync(workdir);
  mkdirSync(outside);
  writeFileSync(join(outside, "f"), "OUTSIDE\n");
  symlinkSync(outside, join(workdir, "out"));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  forceDescriptorPathsForTests(undefined);
});

for (const mode of ["descriptor paths", "portable fallback"] as const) {
  describe(`on ${mode}`, () => {
    beforeEach(() => {
      if (mode === "portable fallback") forceDescriptorPathsForTests(false);
    });

    it("a rewind never reads, writes or removes through a symlinked parent", async () => {
      expect(await currentDigest(workdir, Buffer.from("out/f"))).toBe("unsafe");
      await expect(restore(workdir, Buffer.from("out/f"), { bytes: Buffer.from("restored\n"), mode: 0o100644 })).rejects.toBeInstanceOf(PathChanged);
      await expect(restore(workdir, Buffer.from("out/new/g"), { bytes: Buffer.from("restored\n"), mode: 0o100644 })).rejects.toBeInstanceOf(PathChanged);
      await expect(restore(workdir, Buffer.from("out/f"), undefined)).rejects.toBeInstanceOf(PathChanged);
      expect(readdirSync(outside)).toEqual(["f"]);
      expect(readFileSync(join(outside, "f"), "utf8")).toBe("OUTSIDE\n");
    });

    it("a rewind restores files, modes and symlinks in place, making missing parents, leaving no temporary file", async () => {
      await restore(workdir, Buffer.from("a/b/script.sh"), { bytes: Buffer.from("#!/bin/sh\n"), mode: 0o100755 });
      await restore(workdir, Buffer.from("a/link"), { bytes: Buffer.from("b/script.sh"), mode: 0o120000 });
      expect(readFileSync(join(workdir, "a/b/script.sh"), "utf8")).toBe("#!/bin/sh\n");
      expect(statSync(join(workdir, "a/b/script.sh")).mode & 0o777).toBe(0o755);
      expect(readlinkSync(join(workdir, "a/link"))).toBe("b/script.sh");
      expect(await currentDigest(workdir, Buffer.from("a/b/script.sh"))).toBe(sha256Hex(Buffer.from("#!/bin/sh\n")));
      expect(await currentDigest(workdir, Buffer.from("a/link"))).toBe(sha256Hex(Buffer.from("b/script.sh")));
      expect(await currentDigest(workdir, Buffer.from("a/missing/x"))).toBeNull();
      await restore(workdir, Buffer.from("a/b/script.sh"), undefined);
      expect(readdirSync(join(workdir, "a")).sort()).toEqual(["b", "link"]);
      expect(readdirSync(join(workdir, "a/b"))).toEqual([]);
    });

    it("the recording scan records a symlink to outside as a link, never entering it or reading anything", async () => {
      writeFileSync(join(workdir, "inside.txt"), "inside\n");
      mkdirSync(join(workdir, "sub"));
      writeFileSync(join(workdir, "sub", "deep.txt"), "deep\n");
      const entries = await statScan(realpathSync(workdir));
      expect(entries.map((entry) => [Buffer.from(entry[0], "base64").toString("utf8"), entry[2], entry[1]])).toEqual([
        ["inside.txt", 0o100644, ""],
        ["out", 0o120000, ""],
        ["sub/deep.txt", 0o100644, ""],
      ]);
    });

    it("listing and files/content work, and refuse the symlinked directory", async () => {
      mkdirSync(join(workdir, "d"));
      writeFileSync(join(workdir, "d", "f.txt"), "hello\n");
      const page = await listFiles(workdir, b64("d"), undefined);
      expect(page.entries.map((entry) => Buffer.from(entry.path.bytesBase64, "base64").toString("utf8"))).toEqual(["d/f.txt"]);
      const items = await captureFile(workdir, decodeWorkspacePath(b64("d/f.txt")), undefined);
      expect(items.at(-1)).toMatchObject({ type: "file.end", size: 6 });
      await expect(listFiles(workdir, b64("out"), undefined)).rejects.toMatchObject({ body: { _tag: "ValidationError" } });
      await expect(captureFile(workdir, decodeWorkspacePath(b64("out/f")), undefined)).rejects.toMatchObject({ body: { _tag: "ValidationError" } });
      expect(lstatSync(join(workdir, "out")).isSymbolicLink()).toBe(true);
    });
  });
}
