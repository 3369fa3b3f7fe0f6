// makeDirectory (services/contract/directory.ts): `mkdir -p` that always ends. Node 20's recursive
// mkdir spins forever under a parent that refuses children with ENOENT (/proc), which hung
// `--database /proc/x/y.db`; these end with the error of the directory that could not be made.
import { mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDirectory, makeDirectorySync } from "../../services/contract/directory.js";

let root: string;
let umask: number;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "ze-make-directory-"));
  umask = process.umask(0o022);
});
afterAll(() => {
  process.umask(umask);
  rmSync(root, { recursive: true, force: true });
});

const variants = [
  ["makeDirectory", (path: string, mode?: number) => makeDirectory(path, mode)],
  ["makeDirectorySync", async (path: string, mode?: number) => makeDirectorySync(path, mode)],
] as const;

describe.each(variants)("%s", (name, make) => {
  it("creates every missing parent with the mode, and is a no-op on an existing directory", async () => {
    const deep = join(root, name, "a", "b", "c");
    await make(deep, 0o700);
    for (const directory of [join(root, name), join(root, name, "a"), join(root, name, "a", "b"), deep]) {
      expect(statSync(directory).isDirectory()).toBe(true);
      expect(statSync(directory).mode & 0o777).toBe(0o700);
    }
    await make(deep, 0o700);
    await make(join(root, name, "a"));
    expect(statSync(deep).isDirectory()).toBe(true);
  });

  it("without a mode, creates with the umask's default (0755 here)", async () => {
    const plain = join(root, `${name}-plain`, "x");
    await make(plain);
    expect(statSync(plain).mode & 0o777).toBe(0o755);
  });

  it("ends with ENOENT under /proc, where Node's recursive mkdir never returns", async () => {
    await expect(make("/proc/ze-harness-no-such/deeper")).rejects.toMatchObject({ code: "ENOENT", path: "/proc/ze-harness-no-such" });
  });

  it("refuses a path through or at a file (ENOTDIR), creating nothing", async () => {
    const file = join(root, `${name}-file`);
    writeFileSync(file, "not a directory");
    await expect(make(join(file, "below"))).rejects.toMatchObject({ code: "ENOTDIR" });
    await expect(make(file)).rejects.toMatchObject({ code: "ENOTDIR", path: file });
    expect(statSync(file).isFile()).toBe(true);
  });

  it("follows a symbolic link to a directory, as mkdir -p does", async () => {
    const target = join(root, `${name}-target`);
    await make(target);
    const link = join(root, `${name}-link`);
    symlinkSync(target, link);
    await make(join(link, "inside"));
    expect(statSync(join(target, "inside")).isDirectory()).toBe(true);
  });

  it("resolves `..` after a symbolic link as the kernel (and mkdir -p) does, not as text", async () => {
    const base = join(root, `${name}-dotdot`);
    await make(join(base, "real", "deep"));
    symlinkSync(join(base, "real", "deep"), join(base, "link"));
    await make(join(base, "link") + "/../made");
    expect(statSync(join(base, "real", "made")).isDirectory()).toBe(true);
    expect(() => statSync(join(base, "made"))).toThrow();
  });

  it("lets concurrent callers create the same tree", async () => {
    const shared = join(root, `${name}-shared`, "p", "q");
    await Promise.all(Array.from({ length: 8 }, () => make(shared, 0o700)));
    expect(statSync(shared).isDirectory()).toBe(true);
  });
});
