// The tree oid of every directory the index holds ("" for the root), as `git write-tree` would
// write it: entries `<mode> <name>\0<20-byte oid>` in git's tree order (a directory sorts as its
// name followed by "/"), modes canonical (`100644`, `100755`, `120000`, `40000`). A HEAD subtree
// with the same oid holds exactly these entries, so HEAD ↔ index need not read it. Paths are
// byte strings (an index read with `latin1` names): one character per byte.
import { createHash } from "node:crypto";
import { fileMode } from "./head-tree.js";
import type { IndexFile } from "./index-file.js";

interface Child {
  readonly key: Buffer; // name, plus "/" for a directory: git's sort key
  readonly name: Buffer;
  readonly mode: string;
  readonly oid: Buffer;
}

const parentOf = (dir: string): string => {
  const slash = dir.lastIndexOf("/");
  return slash < 0 ? "" : dir.slice(0, slash);
};

const depth = (dir: string): number => {
  if (dir === "") return -1;
  let count = 0;
  for (let at = dir.indexOf("/"); at !== -1; at = dir.indexOf("/", at + 1)) count++;
  return count;
};

function treeOid(children: Child[]): Buffer {
  children.sort((a, b) => Buffer.compare(a.key, b.key));
  let size = 0;
  for (const child of children) size += child.mode.length + child.name.length + 22;
  const content = Buffer.allocUnsafe(size);
  let at = 0;
  for (const child of children) {
    at += content.write(child.mode, at, "latin1");
    content[at++] = 0x20;
    at += child.name.copy(content, at);
    content[at++] = 0;
    at += child.oid.copy(content, at);
  }
  return createHash("sha1").update(`tree ${size}\0`).update(content).digest();
}

export function indexTreeOids(index: IndexFile): Map<string, string> {
  const children = new Map<string, Child[]>([["", []]]);
  for (const entry of index.entries) {
    const slash = entry.path.lastIndexOf("/");
    const dir = slash < 0 ? "" : entry.path.slice(0, slash);
    const name = Buffer.from(entry.path.slice(slash + 1), "latin1");
    let list = children.get(dir);
    if (!list) {
      children.set(dir, (list = []));
      for (let up = parentOf(dir); up !== "" && !children.has(up); up = parentOf(up)) children.set(up, []);
    }
    list.push({ key: name, name, mode: fileMode(entry.mode).mode, oid: index.buffer.subarray(entry.oidAt, entry.oidAt + 20) });
  }
  const oids = new Map<string, string>();
  const dirs = [...children.keys()].sort((a, b) => depth(b) - depth(a));
  for (const dir of dirs) {
    const oid = treeOid(children.get(dir)!);
    oids.set(dir, oid.toString("hex"));
    if (dir === "") continue;
    const name = Buffer.from(dir.slice(dir.lastIndexOf("/") + 1), "latin1");
    children.get(parentOf(dir))!.push({ key: Buffer.concat([name, Buffer.from("/")]), name, mode: "40000", oid });
  }
  return oids;
}
