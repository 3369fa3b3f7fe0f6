// Reading a whole byte stream under a byte limit: request bodies at the HTTP edge, provider
// error bodies and webfetch responses all need it, and each must stop reading (and cancel the
// stream) the moment the limit is passed rather than buffer an unbounded body first.

/** Largest request body the server accepts (the reference's 1 MiB wire bound). */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

export interface ReadBoundedOptions {
  /**
   * Whether to await the reader's cancel when the limit is passed (default true). A caller
   * reading a teed body (a cloned Request) must not: such a body cancels only when every
   * branch does, so awaiting it could wait forever.
   */
  readonly awaitCancel?: boolean;
}

/**
 * The stream's bytes, or `"too_large"` once more than `limit` bytes arrived (the stream is then
 * cancelled and nothing more is read). A null stream is an empty body. A read error rejects.
 */
export async function readBounded(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
  options: ReadBoundedOptions = {},
): Promise<Uint8Array<ArrayBuffer> | "too_large"> {
  if (stream === null) return new Uint8Array();
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      const cancelled = reader.cancel().catch(() => undefined);
      if (options.awaitCancel ?? true) await cancelled;
      return "too_large";
    }
    chunks.push(value);
  }
  return concatBytes(chunks);
}

/** The chunks joined into one array. */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(chunks.reduce((size, chunk) => size + chunk.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** A response body as UTF-8 text, or undefined when it is over `limit` bytes (the rest is not read). */
export async function readBoundedText(response: Response, limit: number): Promise<string | undefined> {
  const bytes = await readBounded(response.body, limit);
  return bytes === "too_large" ? undefined : new TextDecoder().decode(bytes);
}
