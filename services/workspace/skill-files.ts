// Where Skill discovery and loading read files: a seam, so one discovery (skills.ts) and one
// loader (skill-load.ts) serve every host. The Node host reads its disk (`diskSkillFiles`, the
// default); the Worker host reads its `/workspace` store (worker/skills.ts). The shapes are the
// parts of `node:fs` the two files use, so the disk implementation is the functions themselves:
// failures reject with an `Error` carrying the errno `code` (`ENOENT`, `ENOTDIR`, …).
import { readdir, realpath, stat } from "node:fs/promises";
import { readBoundedText, type TextRead, type TextOutside } from "./text.js";

/** One directory entry, as `readdir(…, { withFileTypes: true })` gives it. */
export interface SkillDirent {
  readonly name: string;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

/** What `stat` (links followed) says of a path. */
export interface SkillFileStat {
  readonly size: number;
  isFile(): boolean;
  isDirectory(): boolean;
}

export interface SkillFileSystem {
  /** The entries of a directory (any order); rejects with `code` `ENOENT` / `ENOTDIR` when there is none. */
  readdir(path: string): Promise<readonly SkillDirent[]>;
  /** Follows links; rejects with `code` when nothing is there. */
  stat(path: string): Promise<SkillFileStat>;
  /** The canonical path; rejects when nothing is there. */
  realpath(path: string): Promise<string>;
  /** One bounded UTF-8 read (the byte-order mark dropped), as `readBoundedText`. Never rejects. */
  readText(path: string, maxBytes: number): Promise<Exclude<TextRead, TextOutside>>;
}

/** The host's disk through `node:fs`. */
export const diskSkillFiles: SkillFileSystem = {
  readdir: (path) => readdir(path, { withFileTypes: true }),
  stat: (path) => stat(path),
  realpath: (path) => realpath(path),
  readText: (path, maxBytes) => readBoundedText(path, maxBytes),
};
