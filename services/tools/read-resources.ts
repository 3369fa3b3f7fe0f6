// `read` of the calling Session's own resources (the reference's Files.readText over "Session
// attachment or archived tool-result resources under the caller's original invocation
// authority"): an archived tool result (a finished call's output artifact, e.g. the shell's
// `.ze-harness/tool-output/<id>.log`) or a text attachment, in byte pages. Each page is a JSON
// result `{ kind, …, range: { start, end }, totalBytes, content, next }`; `next` is the complete
// continuation object the model passes back unchanged (`read({ next })`) for the following page,
// or null at the end. Pages are exact byte ranges: the next one starts where this one ended, never
// inside a UTF-8 character, so the pages together are the whole resource. Addresses are looked up
// through Core (`ctx.sessionResources`) for the calling Session only: another Session's artifact
// or attachment is `resource_not_in_session`, whatever address or `next` object names it.
import { constants } from "node:fs";
import { openVerified } from "../workspace/files/verified.js";
import { fileFailure } from "./paths.js";
import type { ReadNext } from "./file-contract.js";
import { MAX_FILE_READ_BYTES, ToolFailure, byteLength, jsonResult, throwIfAborted, type ArchivedToolResult, type ToolContext, type ToolOutput } from "./tool.js";

export { NEXT_SCHEMA, type ReadNext } from "./file-contract.js";

/** Room for the page's JSON fields besides `content`. */
const ENVELOPE_RESERVE = 1_024;
/** Most JSON-encoded content bytes in one page. */
const PAGE_BYTES = MAX_FILE_READ_BYTES - ENVELOPE_RESERVE;

const notInSession = (what: string): ToolFailure => new ToolFailure("resource_not_in_session", `No ${what} belongs to this Session.`);
const badNext = (why: string): ToolFailure => new ToolFailure("invalid_continuation", `The next object does not continue a read: ${why}. Pass back the complete next object of the previous page, unchanged.`);

function resources(ctx: ToolContext) {
  if (!ctx.sessionResources) throw new ToolFailure("invalid_input", "This Session's archived tool results and attachments are not available here.");
  return ctx.sessionResources;
}

/** Looks up an archived tool result of this Session by id or recorded path (refused otherwise). */
export async function findArchive(ctx: ToolContext, reference: string): Promise<ArchivedToolResult> {
  const found = await resources(ctx).archive(reference, ctx.signal);
  throwIfAborted(ctx.signal);
  if (!found) throw notInSession(`archived tool result ${JSON.stringify(reference)}`);
  return found;
}

/** One page of an archived tool result, from `afterByte` (0 for the first). */
export async function readArchivePage(ctx: ToolContext, archive: ArchivedToolResult, afterByte = 0, expectedTotal?: number): Promise<ToolOutput> {
  const name = JSON.stringify(archive.path);
  // The archive is the file the tool wrote at its canonical path: checked on the descriptor, so
  // neither a symlink at the file nor one swapped in on the way is followed.
  const { handle, stat: info } = await openVerified(archive.absolutePath, constants.O_RDONLY | constants.O_NONBLOCK).catch((error: unknown) => {
    throw fileFailure(error, archive.path);
  });
  try {
    if (!info.isFile()) throw new ToolFailure("not_file", `${name} is not a regular file.`);
    const total = Number(info.size);
    if (expectedTotal !== undefined && expectedTotal !== total) throw badNext(`the archived output ${name} is ${total} bytes now, not ${expectedTotal}`);
    if (afterByte > total) throw badNext(`byte ${afterByte} is past the end of ${name} (${total} bytes)`);
    const raw = Buffer.alloc(Math.min(PAGE_BYTES, total - afterByte));
    let filled = 0;
    while (filled < raw.length) {
      throwIfAborted(ctx.signal);
      const { bytesRead } = await handle.read(raw, filled, raw.length - filled, afterByte + filled).catch((error: unknown) => {
        throw fileFailure(error, archive.path);
      });
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    const page = cutPage(raw.subarray(0, filled), afterByte + filled >= total, name);
    const end = afterByte + page.bytes;
    return jsonResult({
      kind: "artifact",
      id: archive.id,
      path: archive.path,
      state: archive.state,
      totalBytes: total,
      range: { start: afterByte, end },
      content: page.text,
      next: end < total ? ({ kind: "artifact", id: archive.id, afterByte: end, totalBytes: total } satisfies ReadNext) : null,
    });
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Media types read as text. */
const isTextType = (mimeType: string): boolean => /^text\//i.test(mimeType) || /^application\/(json|xml|javascript)$|\+(json|xml)$/i.test(mimeType);

/** One page of a text attachment of this Session, by name, from `afterByte`. */
export async function readAttachmentPage(ctx: ToolContext, name: string, afterByte = 0, expected?: { readonly digest: string; readonly totalBytes: number }): Promise<ToolOutput> {
  const resource = await resources(ctx).attachments(ctx.signal);
  try {
    throwIfAborted(ctx.signal);
    let offset = 0;
    const entry = resource.metadata.find((candidate) => {
      if (candidate.name === name) return true;
      offset += candidate.bytes;
      return false;
    });
    if (!entry) throw notInSession(`attachment ${JSON.stringify(name)}`);
    if (expected && (expected.digest !== entry.digest || expected.totalBytes !== entry.bytes)) throw badNext(`attachment ${JSON.stringify(name)} is not the one that page came from`);
    if (!isTextType(entry.mimeType)) {
      throw new ToolFailure("not_text", `Attachment ${JSON.stringify(name)} is ${entry.mimeType}, not text; read its bytes in an execute script (attachments.read).`);
    }
    if (afterByte > entry.bytes) throw badNext(`byte ${afterByte} is past the end of ${JSON.stringify(name)} (${entry.bytes} bytes)`);
    const length = Math.min(PAGE_BYTES, entry.bytes - afterByte);
    const page = cutPage(resource.read(offset + afterByte, length), afterByte + length >= entry.bytes, JSON.stringify(name));
    const end = afterByte + page.bytes;
    return jsonResult({
      kind: "attachment",
      name: entry.name,
      mimeType: entry.mimeType,
      digest: entry.digest,
      totalBytes: entry.bytes,
      range: { start: afterByte, end },
      content: page.text,
      next: end < entry.bytes ? ({ kind: "attachment", name: entry.name, digest: entry.digest, afterByte: end, totalBytes: entry.bytes } satisfies ReadNext) : null,
    });
  } finally {
    resource.release();
  }
}

/** Continues a read from its `next` object. */
export async function readNext(ctx: ToolContext, next: ReadNext): Promise<ToolOutput> {
  if (next.kind === "artifact") {
    if (typeof next.id !== "string") throw badNext("an artifact continuation names its id");
    return readArchivePage(ctx, await findArchive(ctx, next.id), next.afterByte, next.totalBytes);
  }
  if (typeof next.name !== "string" || typeof next.digest !== "string") throw badNext("an attachment continuation names its name and digest");
  return readAttachmentPage(ctx, next.name, next.afterByte, { digest: next.digest, totalBytes: next.totalBytes });
}

/**
 * The page's text from `bytes` (read from the resource's current position): whole UTF-8
 * characters only — ending at a newline when one lies in the page's second half, unless the page
 * reaches the end — and at most PAGE_BYTES once JSON-encoded. At least one character.
 */
function cutPage(bytes: Buffer, reachesEnd: boolean, name: string): { text: string; bytes: number } {
  let length = bytes.length;
  for (;;) {
    let cut = length;
    if (!(reachesEnd && cut === bytes.length)) {
      // Back off an incomplete character at the cut.
      let lead = cut - 1;
      while (lead > 0 && lead > cut - 4 && (bytes[lead]! & 0xc0) === 0x80) lead--;
      const first = bytes[lead];
      if (first !== undefined && cut - lead < sequenceLength(first)) cut = lead;
      const newline = bytes.lastIndexOf(0x0a, cut - 1);
      if (newline >= cut / 2) cut = newline + 1;
      if (cut === 0) cut = Math.min(bytes.length, Math.max(1, sequenceLength(bytes[0] ?? 0)));
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, cut));
    } catch {
      throw new ToolFailure("invalid_utf8", `${name} is not UTF-8 text.`);
    }
    const encoded = byteLength(JSON.stringify(text));
    if (encoded <= PAGE_BYTES || cut <= 4) return { text, bytes: cut };
    length = Math.max(1, Math.floor((cut * PAGE_BYTES) / encoded) - 1);
  }
}

/** Bytes of the UTF-8 sequence a lead byte starts (1 for anything else). */
function sequenceLength(lead: number): number {
  return lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
}
