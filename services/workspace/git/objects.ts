// The few commit and tree objects the fast status needs, read straight from the object store:
// a loose object, or a packed one found through its pack's `.idx` (v2), reading only that
// object's bytes and applying its deltas — isomorphic-git loads a whole packfile into memory
// to read one object (~0.1 s for a 50 MB pack, on every status). Every object read is checked
// against its oid; anything this does not read (alternates, an idx v1, a damaged or missing
// object) is undefined, and the caller asks isomorphic-git, which reads it or says why not.
import { createHash } from "node:crypto";
import { promises as fsp, type promises } from "node:fs";
import { join } from "node:path";
import { inflateSync } from "node:zlib";

export interface GitObject {
  readonly type: "commit" | "tree" | "blob" | "tag";
  readonly content: Buffer;
}

interface Pack {
  readonly idx: Buffer;
  readonly path: string;
  handle?: Promise<promises.FileHandle>;
}

const TYPES = [undefined, "commit", "tree", "blob", "tag"] as const;
const MAX_DELTA_DEPTH = 64;

function hashOf(type: string, content: Buffer): string {
  return createHash("sha1").update(`${type} ${content.length}\0`).update(content).digest("hex");
}

/** The pack offset of `oid` by its `.idx` v2, or undefined. */
function findInIdx(idx: Buffer, oid: Buffer): number | undefined {
  if (idx.length < 8 + 1024 || idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) return undefined;
  const first = oid[0]!;
  let low = first === 0 ? 0 : idx.readUInt32BE(8 + 4 * (first - 1));
  let high = idx.readUInt32BE(8 + 4 * first);
  const count = idx.readUInt32BE(8 + 4 * 255);
  const shas = 8 + 1024;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const order = Buffer.compare(idx.subarray(shas + 20 * middle, shas + 20 * middle + 20), oid);
    if (order === 0) {
      const offset = idx.readUInt32BE(shas + 24 * count + 4 * middle);
      if ((offset & 0x80000000) === 0) return offset;
      return Number(idx.readBigUInt64BE(shas + 28 * count + 8 * (offset & 0x7fffffff)));
    }
    if (order < 0) low = middle + 1;
    else high = middle;
  }
  return undefined;
}

/** Applies a git delta to `base`; undefined when it does not fit. */
function applyDelta(base: Buffer, delta: Buffer): Buffer | undefined {
  let at = 0;
  const varint = (): number => {
    let value = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = delta[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80 && at < delta.length);
    return value;
  };
  if (varint() !== base.length) return undefined;
  const out = Buffer.allocUnsafe(varint());
  let written = 0;
  while (at < delta.length) {
    const op = delta[at++]!;
    if (op & 0x80) {
      let offset = 0;
      let size = 0;
      for (let bit = 0; bit < 4; bit++) if (op & (1 << bit)) offset += delta[at++]! * 2 ** (8 * bit);
      for (let bit = 0; bit < 3; bit++) if (op & (0x10 << bit)) size += delta[at++]! << (8 * bit);
      if (size === 0) size = 0x10000;
      if (offset + size > base.length || written + size > out.length) return undefined;
      written += base.copy(out, written, offset, offset + size);
    } else if (op !== 0) {
      if (written + op > out.length || at + op > delta.length) return undefined;
      written += delta.copy(out, written, at, at + op);
      at += op;
    } else return undefined;
  }
  return written === out.length ? out : undefined;
}

export class ObjectReader {
  private packs: Promise<Pack[]> | undefined;

  constructor(private readonly gitdir: string) {}

  /** The object `oid` (verified), or undefined when only isomorphic-git can read it. */
  async read(oid: string): Promise<GitObject | undefined> {
    try {
      return (await this.loose(oid)) ?? (await this.packed(oid, 0));
    } catch {
      return undefined;
    }
  }

  async close(): Promise<void> {
    for (const pack of (await this.packs?.catch(() => [])) ?? []) await (await pack.handle?.catch(() => undefined))?.close();
  }

  private async loose(oid: string): Promise<GitObject | undefined> {
    let raw: Buffer;
    try {
      raw = inflateSync(await fsp.readFile(join(this.gitdir, "objects", oid.slice(0, 2), oid.slice(2))));
    } catch (error) {
      if ((error as { code?: string }).code === "ENOENT") return undefined;
      throw error;
    }
    const nul = raw.indexOf(0);
    const [type, size] = raw.toString("latin1", 0, nul).split(" ");
    const content = raw.subarray(nul + 1);
    if (!TYPES.includes(type as never) || Number(size) !== content.length || createHash("sha1").update(raw).digest("hex") !== oid) return undefined;
    return { type: type as GitObject["type"], content };
  }

  private async packed(oid: string, depth: number): Promise<GitObject | undefined> {
    const key = Buffer.from(oid, "hex");
    for (const pack of await this.listPacks()) {
      const offset = findInIdx(pack.idx, key);
      if (offset === undefined) continue;
      const found = await this.atOffset(pack, offset, depth);
      return found && hashOf(found.type, found.content) === oid ? found : undefined;
    }
    return undefined;
  }

  private listPacks(): Promise<Pack[]> {
    this.packs ??= (async () => {
      const dir = join(this.gitdir, "objects", "pack");
      const names = (await fsp.readdir(dir).catch(() => [] as string[])).filter((name) => name.endsWith(".idx")).sort();
      return Promise.all(names.map(async (name) => ({ idx: await fsp.readFile(join(dir, name)), path: join(dir, `${name.slice(0, -4)}.pack`) })));
    })();
    return this.packs;
  }

  private async atOffset(pack: Pack, offset: number, depth: number): Promise<GitObject | undefined> {
    if (depth > MAX_DELTA_DEPTH) return undefined;
    const handle = await (pack.handle ??= fsp.open(pack.path, "r"));
    const head = Buffer.alloc(32);
    const { bytesRead } = await handle.read(head, 0, 32, offset);
    let at = 0;
    let byte = head[at++]!;
    const kind = (byte >> 4) & 7;
    let size = byte & 15;
    for (let shift = 4; byte & 0x80; shift += 7) {
      byte = head[at++]!;
      size += (byte & 0x7f) * 2 ** shift;
    }
    let base: GitObject | undefined;
    if (kind === 6) {
      byte = head[at++]!;
      let back = byte & 0x7f;
      while (byte & 0x80) {
        byte = head[at++]!;
        back = (back + 1) * 128 + (byte & 0x7f);
      }
      base = await this.atOffset(pack, offset - back, depth + 1);
    } else if (kind === 7) {
      const baseOid = head.toString("hex", at, at + 20);
      at += 20;
      base = (await this.loose(baseOid)) ?? (await this.packed(baseOid, depth + 1));
    } else if (TYPES[kind] === undefined) return undefined;
    if (at > bytesRead || ((kind === 6 || kind === 7) && !base)) return undefined;
    // Deflate never grows data by more than 5 bytes per 16 KiB block plus a few; zlib stops at
    // the stream's end, so the bytes of the next object read along are ignored.
    const length = size + 5 * Math.ceil((size + 1) / 16_000) + 64;
    const chunk = Buffer.allocUnsafe(length);
    const read = await handle.read(chunk, 0, length, offset + at);
    const data = inflateSync(chunk.subarray(0, read.bytesRead));
    if (data.length !== size) return undefined;
    if (!base) return { type: TYPES[kind]!, content: data };
    const content = applyDelta(base.content, data);
    return content ? { type: base.type, content } : undefined;
  }
}
