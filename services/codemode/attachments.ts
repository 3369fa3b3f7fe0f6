// The `attachments` resource of one execution (the reference's Executor "attachments": "one
// optional binary resource … metadata is an ordered array of { name, mimeType, bytes, digest };
// the resource contains the original file bytes concatenated in that order, with each offset
// determined by preceding lengths. Read through the actual request resource, which retains Host
// byte-budget and cleanup custody; metadata alone grants no access").
//
// The resource copies the files' bytes into one buffer when it is made, so what a script reads
// matches the digests whatever happens to the sources afterwards. Every read is checked (a safe
// integer range inside the resource), charged against the byte budget, and returns a copy;
// `release()` drops the buffer, after which every read fails with `attachment_released`. The
// caller (the `execute` tool) releases it when its call settles.
import { createHash } from "node:crypto";
import { DEFAULT_ATTACHMENT_BUDGET_BYTES, MAX_ATTACHMENT_READ_BYTES } from "./limits.js";

/** One file placed in the resource. */
export interface AttachmentFile {
  readonly name: string;
  readonly mimeType: string;
  readonly bytes: Uint8Array;
}

/** What a script sees of one file (the resource's metadata entry). */
export interface AttachmentMetadata {
  readonly name: string;
  readonly mimeType: string;
  /** Length in bytes; the file starts where the preceding files' lengths add up to. */
  readonly bytes: number;
  /** `sha256:<hex>` of the file's bytes. */
  readonly digest: string;
}

export type AttachmentErrorCode =
  /** `offset`/`length` are not non-negative safe integers, or the encoding is unknown. */
  | "attachment_invalid_read"
  /** The range does not lie inside the resource (`offset + length` past its end). */
  | "attachment_out_of_range"
  /** One read asked for more than `MAX_ATTACHMENT_READ_BYTES`. */
  | "attachment_read_too_large"
  /** The read would pass the execution's byte budget (nothing was returned). */
  | "attachment_budget_exhausted"
  /** The resource was released: the call it belonged to has settled. */
  | "attachment_released";

/** A refused read; `message` is safe for the model. Match it by `_tag`. */
export class AttachmentError extends Error {
  readonly _tag = "AttachmentError" as const;
  constructor(
    readonly code: AttachmentErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "AttachmentError";
  }
}

export const isAttachmentError = (cause: unknown): cause is AttachmentError =>
  typeof cause === "object" && cause !== null && (cause as { _tag?: unknown })._tag === "AttachmentError";

export interface AttachmentResourceOptions {
  /** Bytes all reads may return together (default {@link DEFAULT_ATTACHMENT_BUDGET_BYTES}). */
  readonly budgetBytes?: number;
}

export class AttachmentResource {
  readonly metadata: readonly AttachmentMetadata[];
  /** Total length: the sum of every file's `bytes`. */
  readonly size: number;
  readonly budgetBytes: number;
  private data: Buffer | undefined;
  private spent = 0;

  constructor(files: readonly AttachmentFile[], options: AttachmentResourceOptions = {}) {
    const budget = options.budgetBytes ?? DEFAULT_ATTACHMENT_BUDGET_BYTES;
    if (!Number.isSafeInteger(budget) || budget < 0) throw new RangeError("budgetBytes must be a non-negative safe integer");
    this.budgetBytes = budget;
    this.data = Buffer.concat(files.map((file) => file.bytes));
    this.size = this.data.length;
    let offset = 0;
    this.metadata = Object.freeze(
      files.map((file) => {
        const bytes = this.data!.subarray(offset, offset + file.bytes.length);
        offset += bytes.length;
        return Object.freeze({ name: file.name, mimeType: file.mimeType, bytes: bytes.length, digest: `sha256:${createHash("sha256").update(bytes).digest("hex")}` });
      }),
    );
  }

  /** Bytes the budget still allows. */
  get remainingBytes(): number {
    return this.budgetBytes - this.spent;
  }

  get released(): boolean {
    return this.data === undefined;
  }

  /** A copy of `length` bytes from `offset`, charged against the budget. Throws an {@link AttachmentError}. */
  read(offset: number, length: number): Buffer {
    const data = this.data;
    if (!data) throw new AttachmentError("attachment_released", "The attachments resource was released: it is readable only while its execute call runs.");
    if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(length) || length < 0) {
      throw new AttachmentError("attachment_invalid_read", "attachments.read(offset, length) takes two non-negative integers.");
    }
    if (offset + length > this.size) {
      throw new AttachmentError("attachment_out_of_range", `Bytes ${offset}..${offset + length} are outside the attachments resource (${this.size} bytes).`);
    }
    if (length > MAX_ATTACHMENT_READ_BYTES) {
      throw new AttachmentError("attachment_read_too_large", `One read returns at most ${MAX_ATTACHMENT_READ_BYTES} bytes; this one asked for ${length}.`);
    }
    if (length > this.remainingBytes) {
      throw new AttachmentError(
        "attachment_budget_exhausted",
        `The read of ${length} bytes would pass the execution's attachment budget (${this.budgetBytes} bytes, ${this.remainingBytes} left).`,
      );
    }
    this.spent += length;
    return Buffer.from(data.subarray(offset, offset + length));
  }

  /** Drops the bytes; later reads fail with `attachment_released`. Idempotent. */
  release(): void {
    this.data = undefined;
  }
}
