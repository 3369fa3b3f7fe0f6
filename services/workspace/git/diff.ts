// gitDiff: one file's complete diff in one area — HEAD ↔ index (`staged`), index ↔ working
// file (`worktree`), or an empty file ↔ an untracked working file (`untracked`). Both inputs are
// read in full; the result is `text` (a complete git-style unified patch made with `diff`),
// `binary` (either side not UTF-8 text, or holding NUL), `unchanged`, or `unsupported` (a
// symlink, a type change, a non-regular file). No repository → null.
// The sides are read directly — the index entry (index-file.ts), HEAD's entry by walking its
// trees down the path (head-tree.ts), the working file by `lstat` through real directories — with
// the path as its exact bytes, so names that are not UTF-8 diff like any other. An index only
// isomorphic-git reads faithfully (another version, unmerged entries) takes its walk (walk.ts),
// which needs a UTF-8 name (`filename_encoding` otherwise).
import { createHash } from "node:crypto";
import { lstatSync, promises as fsp, type Stats } from "node:fs";
import git from "isomorphic-git";
import type { GitDiffArea, GitFileDiff } from "../../../generated/client/types.gen.js";
import { conflict, validationFailure } from "../../contract/failure.js";
import { decodeWorkspacePath, utf8OrUndefined } from "../files/path.js";
import { asText, quotedNames, textPatch } from "./patch-text.js";
import { readOnlyGitFs } from "./fs.js";
import { fileMode, gitlink, headEntry } from "./head-tree.js";
import { readIndexFile } from "./index-file.js";
import { ObjectReader } from "./objects.js";
import { checkRepositoryFeatures, fileModeTrusted, locateRepository, type Repository } from "./repository.js";
import { headCommit, walkRepository, type Side, type SideType } from "./walk.js";
import { byteString, fsPath } from "./worktree.js";
import { WorkspaceUnsupported } from "./unsupported.js";

const AREAS: readonly GitDiffArea[] = ["staged", "worktree", "untracked"];

/** One side of a diff: its kind, normalized mode, bytes and blob oid. */
interface DiffSide {
  readonly type: SideType;
  readonly mode: string;
  content(): Promise<Uint8Array>;
  oid(): Promise<string>;
}

interface Sides {
  readonly head?: DiffSide | undefined;
  readonly stage?: DiffSide | undefined;
  readonly workdir?: DiffSide | undefined;
}

const blobOid = (content: Uint8Array): string => createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");

/** A blob by oid: objects.ts where it reads it, isomorphic-git otherwise. */
async function readBlob(repo: Repository, oid: string, signal?: AbortSignal): Promise<Uint8Array> {
  const objects = new ObjectReader(repo.gitdir);
  try {
    const object = await objects.read(oid);
    if (object?.type === "blob") return object.content;
  } finally {
    await objects.close();
  }
  return (await git.readBlob({ fs: readOnlyGitFs(signal), dir: repo.dir, gitdir: repo.gitdir, oid })).blob;
}

function storedSide(repo: Repository, mode: number, oid: string, signal?: AbortSignal): DiffSide {
  const normal = fileMode(mode);
  return { type: normal.symlink ? "symlink" : "regular", mode: normal.mode, content: () => readBlob(repo, oid, signal), oid: async () => oid };
}

/** The working file at `path` (a byte string), reached through real directories only; undefined when absent or a directory. */
function workdirSide(repo: Repository, path: string): DiffSide | undefined {
  const names = path.split("/");
  let abs = byteString(repo.dir);
  let stat: Stats | undefined;
  for (const [i, name] of names.entries()) {
    abs = `${abs}/${name}`;
    stat = lstatSync(fsPath(abs), { throwIfNoEntry: false });
    if (!stat) return undefined;
    if (i < names.length - 1 && !stat.isDirectory()) return undefined;
  }
  if (!stat || stat.isDirectory()) return undefined;
  const file = fsPath(abs);
  if (!stat.isFile() && !stat.isSymbolicLink()) return { type: "special", mode: "100644", content: async () => new Uint8Array(), oid: async () => "" };
  const symlink = stat.isSymbolicLink();
  const read = (): Promise<Uint8Array> => (symlink ? fsp.readlink(file, { encoding: "buffer" }) : fsp.readFile(file));
  return { type: symlink ? "symlink" : "regular", mode: fileMode(stat.mode).mode, content: read, oid: async () => blobOid(await read()) };
}

/** The three sides read directly, or undefined when the index is one only the walk reads. */
async function directSides(repo: Repository, path: string, signal?: AbortSignal): Promise<Sides | undefined> {
  const index = await readIndexFile(repo.gitdir, "latin1");
  if (!index) return undefined;
  const entry = index.entries.find((candidate) => candidate.path === path);
  if (entry && entry.mode >>> 12 === 0b1110) throw gitlink();
  const head = await headEntry(repo, await headCommit(repo, signal), path, signal);
  const headSide = head === undefined || head === "tree" ? undefined : storedSide(repo, Number.parseInt(head.mode, 8), head.oid, signal);
  let workdir = workdirSide(repo, path);
  // A file neither HEAD nor the index has (as a file) is left out when ignored, as status does.
  if (workdir && !entry && !headSide) {
    const ignored = await git.isIgnored({ fs: readOnlyGitFs(signal, { memoize: true, byteNames: true }), dir: byteString(repo.dir), gitdir: byteString(repo.gitdir), filepath: path });
    if (ignored) workdir = undefined;
  }
  return { head: headSide, stage: entry ? storedSide(repo, entry.mode, entry.oid, signal) : undefined, workdir };
}

/** The sides through isomorphic-git's walk (a UTF-8 path). */
async function walkedSides(repo: Repository, path: string, signal?: AbortSignal): Promise<Sides> {
  const [record] = (await walkRepository(repo, { signal, only: path })).filter((candidate) => candidate.path === path);
  const adapt = (side: Side | undefined): DiffSide | undefined => {
    if (!side || side.type === "tree") return undefined;
    return {
      type: side.type,
      mode: side.mode,
      content: async () => (await side.entry.content()) ?? (await readBlob(repo, await side.entry.oid(), signal)),
      oid: () => side.entry.oid(),
    };
  };
  return { head: adapt(record?.head), stage: adapt(record?.stage), workdir: adapt(record?.workdir) };
}

export async function gitDiff(workdir: string, area: string, pathBase64: string, signal?: AbortSignal): Promise<GitFileDiff | null> {
  if (!AREAS.includes(area as GitDiffArea)) throw validationFailure(`area must be one of ${AREAS.join(", ")}`);
  const decoded = decodeWorkspacePath(pathBase64);
  const bytes = Buffer.from(decoded.bytes);
  const shown = utf8OrUndefined(bytes) ?? JSON.stringify(bytes.toString("latin1"));
  const repo = await locateRepository(workdir);
  if (!repo) return null;
  await checkRepositoryFeatures(repo);
  const filemode = await fileModeTrusted(repo);
  let sides = await directSides(repo, bytes.toString("latin1"), signal);
  if (!sides) {
    const text = utf8OrUndefined(bytes);
    if (text === undefined) throw new WorkspaceUnsupported("filename_encoding", "this index is read only by isomorphic-git, which needs UTF-8 path names");
    sides = await walkedSides(repo, text, signal);
  }
  const fields = { path: { bytesBase64: pathBase64 }, area: area as GitDiffArea };
  let before: DiffSide | undefined;
  let after: DiffSide | undefined;
  if (area === "staged") [before, after] = [sides.head, sides.stage];
  else if (area === "worktree") [before, after] = [sides.stage, sides.workdir];
  else {
    if (sides.stage) throw conflict(`${shown} is tracked (in the index): diff it in the worktree area`);
    after = sides.workdir;
  }
  if (area === "worktree" && !before && after) throw conflict(`${shown} is not in the index: diff it in the untracked area`);
  const modes = { ...(before ? { oldMode: before.mode } : {}), ...(after ? { newMode: after.mode } : {}) };
  if (!before && !after) return { kind: "unchanged", ...fields };
  for (const side of [before, after]) {
    if (side?.type === "special") return { kind: "unsupported", ...fields, ...modes, reason: "not a regular file" };
  }
  if (before && after && before.type !== after.type) return { kind: "unsupported", ...fields, ...modes, reason: "type change between a file and a symlink" };
  if (before?.type === "symlink" || after?.type === "symlink") {
    if (before && after && (await before.oid()) === (await after.oid())) return { kind: "unchanged", ...fields, ...modes };
    return { kind: "unsupported", ...fields, ...modes, reason: "symlink" };
  }
  const [oldBytes, newBytes] = await Promise.all([before?.content(), after?.content()]);
  const sameMode = !before || !after || !filemode || before.mode === after.mode;
  if (before && after && sameMode && Buffer.compare(Buffer.from(oldBytes!), Buffer.from(newBytes!)) === 0) return { kind: "unchanged", ...fields, ...modes };
  const oldText = oldBytes ? asText(oldBytes) : "";
  const newText = newBytes ? asText(newBytes) : "";
  if (oldText === undefined || newText === undefined) {
    return { kind: "binary", ...fields, ...modes, ...(oldBytes ? { oldSize: oldBytes.length } : {}), ...(newBytes ? { newSize: newBytes.length } : {}) };
  }
  const effective = (side: DiffSide | undefined, text: string) => (side ? { text, mode: filemode ? side.mode : "100644" } : undefined);
  return { kind: "text", ...fields, ...modes, patch: textPatch(utf8OrUndefined(bytes) ?? "", effective(before, oldText), effective(after, newText), utf8OrUndefined(bytes) === undefined ? quotedNames(bytes) : undefined) };
}
