// Reading a Content-Encoded request body under a limit on its DECODED size. A zip bomb (1 MiB
// of gzip can hold 1 GiB) must stop once the limit is passed, not after it was inflated:
// the Web DecompressionStream of Node 20 inflates everything written to it ahead of its reader,
// so node:zlib is driven directly instead. Input is read one chunk at a time, only once the
// decoder took the previous one, and the decoder is destroyed the moment its output passes the
// limit (zlib emits at most 16 KiB at a time, so it never inflates much more than that).
import { createGunzip, createInflate, type Gunzip, type Inflate } from "node:zlib";
import { concatBytes } from "../contract/body.js";

/** Content codings a request body may use, besides `identity`. */
export const SUPPORTED_CONTENT_ENCODINGS = ["gzip", "deflate"] as const;
export type ContentEncoding = (typeof SUPPORTED_CONTENT_ENCODINGS)[number];

/** Thrown when the body is not valid data of its coding (or its stream failed while decoding). */
export class UndecodableBody extends Error {
  override readonly name = "UndecodableBody";
}

// RFC 9110 `deflate` is the zlib format, which is what createInflate reads.
const decoderFor = (encoding: ContentEncoding): Gunzip | Inflate => (encoding === "gzip" ? createGunzip() : createInflate());

/**
 * The decoded bytes of `stream`, coded with `encodings` in the order they were applied, or
 * `"too_large"` once more than `limit` decoded bytes came out. The stream's cancel is not
 * awaited: a teed body (a cloned Request) cancels only when every branch does.
 */
export async function readDecoded(
  stream: ReadableStream<Uint8Array> | null,
  encodings: readonly ContentEncoding[],
  limit: number,
): Promise<Uint8Array<ArrayBuffer> | "too_large"> {
  // The last coding applied is undone first.
  const decoders = [...encodings].reverse().map(decoderFor);
  const first = decoders[0];
  const last = decoders.at(-1);
  if (first === undefined || last === undefined) throw new TypeError("readDecoded needs at least one encoding");
  for (let index = 0; index + 1 < decoders.length; index++) decoders[index]!.pipe(decoders[index + 1]!);

  const chunks: Uint8Array[] = [];
  let size = 0;
  let over = false;
  const decoded = new Promise<void>((resolvePromise, reject) => {
    last.on("data", (chunk: Buffer) => {
      if (over) return;
      size += chunk.byteLength;
      if (size > limit) {
        over = true;
        // Stops zlib mid-chunk: nothing more is inflated.
        for (const decoder of decoders) decoder.destroy();
        resolvePromise();
        return;
      }
      chunks.push(chunk);
    });
    last.on("end", () => resolvePromise());
    for (const decoder of decoders) decoder.on("error", (error: Error) => reject(new UndecodableBody(error.message)));
  });

  const reader = stream?.getReader();
  const fed = (async (): Promise<void> => {
    for (;;) {
      const next = reader ? await reader.read() : { done: true as const, value: undefined };
      if (over) return;
      if (next.done) {
        first.end();
        return;
      }
      // One chunk in flight: the next is read only once the decoder has taken this one.
      await new Promise<void>((resolvePromise) => first.write(next.value, () => resolvePromise()));
      if (over) return;
    }
  })();

  try {
    // A failing read (the client went away) or a decoder error ends the read either way.
    await Promise.race([decoded, fed.then(() => decoded)]);
  } catch (error) {
    void reader?.cancel().catch(() => undefined);
    throw error instanceof UndecodableBody ? error : new UndecodableBody(error instanceof Error ? error.message : String(error));
  } finally {
    for (const decoder of decoders) decoder.destroy();
  }
  if (over) {
    void reader?.cancel().catch(() => undefined);
    return "too_large";
  }
  return concatBytes(chunks);
}
