// Request bodies and their wording at the HTTP edge, in-process: Content-Encoding (gzip and
// deflate decoded under the 1 MiB limit, anything else refused), validation messages that name
// the field (dotted label and JSON pointer) and what it allows, HEAD on an SSE route, and the
// one bounded body read (services/contract/body.ts) the edge, the providers and webfetch share.
import { randomUUID } from "node:crypto";
import { deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { zReasoningEffort } from "../../generated/client/zod.gen.js";
import type { Handlers, SseMessage } from "../../generated/server/routes.js";
import { readBounded } from "../../services/contract/body.js";
import { createFetchHandler, type RequestContext } from "../../services/http/handler.js";
import { describeIssues, pointer, type Issue } from "../../services/http/issues.js";
import { fieldLabel, MAX_REQUEST_BODY_BYTES } from "../../services/http/request.js";
import { harnessPerTest } from "../support/harness.js";

const base = "http://localhost";
const sessionsPath = "/v1/servers/local/sessions";

const harness = harnessPerTest();

const listedIds = async (): Promise<string[]> =>
  ((await (await harness().fetch(new Request(`${base}${sessionsPath}`))).json()) as { sessions: { id: string }[] }).sessions.map((s) => s.id);

/** PUT createSession with an encoded body. */
const putEncoded = (id: string, body: Uint8Array, encoding: string): Promise<Response> =>
  harness().fetch(
    new Request(`${base}${sessionsPath}/${id}`, {
      method: "PUT",
      headers: { "content-type": "application/json", "content-encoding": encoding },
      body: new Uint8Array(body),
    }),
  );

async function expectValidation(response: Response, message: RegExp | string, status = 400): Promise<void> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as { _tag: string; message: string };
  expect(body._tag).toBe("ValidationError");
  if (typeof message === "string") expect(body.message).toBe(message);
  else expect(body.message).toMatch(message);
}

/** A body stream handing out `bytes` in 1 KiB chunks on demand, counting what was pulled. */
function countingStream(bytes: Uint8Array): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let offset = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (offset >= bytes.byteLength) return controller.close();
        controller.enqueue(bytes.slice(offset, offset + 1024));
        offset += 1024;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => Math.min(offset, bytes.byteLength) };
}

describe("Content-Encoding of request bodies", () => {
  const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

  it.each<[string, (bytes: Buffer) => Buffer]>([
    ["gzip", gzipSync],
    ["x-gzip", gzipSync],
    ["deflate", deflateSync],
    ["identity", (bytes) => bytes],
  ])("a %s body is decoded and accepted", async (encoding, encode) => {
    const id = randomUUID();
    const response = await putEncoded(id, encode(json({ systemPrompt: "decoded" })), encoding);
    expect(response.status).toBe(200);
    expect((await response.json()).session).toMatchObject({ id, systemPrompt: "decoded" });
    expect(await listedIds()).toEqual([id]);
  });

  it("gzip over deflate (`deflate, gzip`) is decoded in reverse order", async () => {
    const id = randomUUID();
    const response = await putEncoded(id, gzipSync(deflateSync(json({ systemPrompt: "twice" }))), "deflate, gzip");
    expect(response.status).toBe(200);
    expect(await listedIds()).toEqual([id]);
  });

  it.each(["br", "compress", "zstd"])("Content-Encoding %s is refused naming the supported encodings", async (encoding) => {
    await expectValidation(
      await putEncoded(randomUUID(), json({}), encoding),
      `Invalid request: Content-Encoding "${encoding}" is not supported (supported: gzip, deflate, identity)`,
    );
    expect(await listedIds()).toEqual([]);
  });

  it("a corrupt gzip body is refused as not decodable", async () => {
    await expectValidation(await putEncoded(randomUUID(), json({ systemPrompt: "plain" }), "gzip"), "Invalid request: the body could not be decoded as gzip");
    const truncated = gzipSync(json({ systemPrompt: "cut" })).subarray(0, 12);
    await expectValidation(await putEncoded(randomUUID(), truncated, "gzip"), /could not be decoded as gzip/);
    expect(await listedIds()).toEqual([]);
  });

  it("the limit applies to the decoded body: just under is accepted, just over is refused", async () => {
    const under = randomUUID();
    expect((await putEncoded(under, gzipSync(json({ systemPrompt: "x".repeat(MAX_REQUEST_BODY_BYTES - 100) })), "gzip")).status).toBe(200);
    const over = gzipSync(json({ systemPrompt: "x".repeat(MAX_REQUEST_BODY_BYTES) }));
    expect(over.byteLength).toBeLessThan(64 * 1024);
    await expectValidation(await putEncoded(randomUUID(), over, "gzip"), "Request body exceeds the 1048576-byte limit", 413);
    expect(await listedIds()).toEqual([under]);
  });

  it("a zip bomb fails with the limit message without decoding more than the limit", async () => {
    // 16 gzip members of 64 MiB of zeros each: 1 GiB decoded from under 1 MiB of body.
    const member = gzipSync(Buffer.alloc(64 * 1024 * 1024));
    const bomb = Buffer.concat(Array.from({ length: 16 }, () => member));
    expect(bomb.byteLength).toBeLessThan(MAX_REQUEST_BODY_BYTES);
    const { stream, pulled } = countingStream(bomb);
    // The harness's own fetch: no contract wrapper, so no tee between the stream and the handler.
    const response = await harness().harness.fetch(
      new Request(`${base}${sessionsPath}/${randomUUID()}`, {
        method: "PUT",
        headers: { "content-type": "application/json", "content-encoding": "gzip" },
        body: stream,
        duplex: "half",
      } as RequestInit),
    );
    await expectValidation(response, "Request body exceeds the 1048576-byte limit", 413);
    // 1 MiB of zeros is about 1 KiB of gzip: decoding stops after the first few KiB of the body.
    expect(pulled()).toBeLessThan(16 * 1024);
  });
});

describe("validation messages name the field and what it allows", () => {
  const prompts = `${sessionsPath}/${randomUUID()}/prompts`;
  const queue = { delivery: "queue", turnId: randomUUID(), prompt: [{ type: "text", text: "hi" }] };
  const submit = (body: unknown): Promise<Response> =>
    harness().fetch(
      new Request(`${base}${prompts}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-ze-harness-client-id": "edge-test" },
        body: JSON.stringify(body),
      }),
    );
  const list = (values: readonly string[]): string => values.map((value) => JSON.stringify(value)).join(", ");

  it.each<[string, unknown, string]>([
    ["an unknown delivery", { ...queue, delivery: "later" }, 'Invalid request: body.delivery (/delivery): must be one of "queue", "steer"'],
    ["no delivery", { turnId: queue.turnId, prompt: queue.prompt }, 'Invalid request: body.delivery (/delivery): must be one of "queue", "steer"'],
    [
      "an unknown prompt part type",
      { ...queue, prompt: [{ type: "video", text: "hi" }] },
      'Invalid request: body.prompt.0.type (/prompt/0/type): must be one of "text", "image", "content-reference"',
    ],
    [
      "an unknown image source type",
      { ...queue, prompt: [queue.prompt[0], { type: "image", source: { type: "file" } }] },
      'Invalid request: body.prompt.1.source.type (/prompt/1/source/type): must be one of "url", "base64"',
    ],
    [
      "an unknown reasoningEffort",
      { ...queue, reasoningEffort: "ultra" },
      `Invalid request: body.reasoningEffort (/reasoningEffort): must be one of ${list(zReasoningEffort.options)}`,
    ],
    ["a text part without text", { ...queue, prompt: [{ type: "text" }] }, "Invalid request: body.prompt.0.text (/prompt/0/text): is required (expected string)"],
    [
      "a steer without its ids",
      { delivery: "steer", prompt: queue.prompt },
      "Invalid request: body.steerId (/steerId): is required (expected string); body.expectedTurnId (/expectedTurnId): is required (expected string)",
    ],
    ["a body that is not an object", [1], "Invalid request: body: expected object, received array"],
  ])("%s", async (_, body, message) => {
    await expectValidation(await submit(body), message);
  });

  it("a bad permission effect names its pointer and the allowed effects", async () => {
    const response = await harness().fetch(
      new Request(`${base}${sessionsPath}/${randomUUID()}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ permissions: [{ action: "read", resource: "*", effect: "maybe" }] }),
      }),
    );
    await expectValidation(response, /^Invalid request: body\.permissions\.0\.effect \(\/permissions\/0\/effect\): must be one of "allow", /);
  });

  it("a query value given twice names the field", async () => {
    await expectValidation(
      await harness().fetch(new Request(`${base}/v1/servers/local/events?afterServerCursor=1&afterServerCursor=2`)),
      "Invalid request: query.afterServerCursor (/afterServerCursor): given more than once",
    );
  });

  it("pointers escape ~ and / (RFC 6901); the whole part has none", () => {
    expect(pointer(["a/b", "c~d", 0])).toBe("/a~1b/c~0d/0");
    expect(fieldLabel("body", ["a/b", 0])).toBe("body.a/b.0 (/a~1b/0)");
    expect(fieldLabel("headers", [])).toBe("headers");
  });

  const word = (schema: z.ZodType, value: unknown): string[] => {
    const result = schema.safeParse(value);
    if (result.success) throw new Error("expected a failure");
    return describeIssues(result.error.issues as readonly Issue[]).map((problem) => `${pointer(problem.path)}: ${problem.text}`);
  };

  it("a discriminated union names the discriminator, or the failures of the member it chose", () => {
    const schema = z.discriminatedUnion("kind", [z.object({ kind: z.literal("a") }), z.object({ kind: z.literal("b"), x: z.string() })]);
    expect(word(schema, { kind: "c" })).toEqual(['/kind: must be one of "a", "b"']);
    expect(word(schema, { kind: "b" })).toEqual(["/x: is required (expected string)"]);
  });

  it("a union of types names every allowed type", () => {
    expect(word(z.object({ a: z.union([z.string(), z.number()]) }), { a: true })).toEqual(["/a: expected string or number, received boolean"]);
  });

  it("a union with no discriminator reports the closest member", () => {
    const schema = z.union([z.object({ a: z.string(), b: z.string() }), z.object({ a: z.string(), c: z.number() })]);
    expect(word(schema, { a: "x", c: "nope" })).toEqual(["/b: is required (expected string)"]);
    expect(word(schema, { a: 1, b: "y", c: "z" })).toEqual(["/a: expected string, received number"]);
  });
});

describe("HEAD on an SSE route", () => {
  it("answers the stream's headers without reading the stream, and ends it", async () => {
    let nexts = 0;
    let returns = 0;
    const stream: AsyncIterable<SseMessage<unknown>> = {
      [Symbol.asyncIterator]: () => ({
        next: () => {
          nexts++;
          return new Promise<IteratorResult<SseMessage<unknown>>>(() => undefined);
        },
        return: async () => {
          returns++;
          return { done: true, value: undefined };
        },
      }),
    };
    const handlers = { watchServer: async () => ({ status: 200, stream }) } as unknown as Handlers<RequestContext>;
    const fetch = createFetchHandler({ handlers, release: "9.9.9", servers: () => true, openapi: () => "{}" });
    const response = await fetch(new Request(`${base}/v1/servers/local/events`, { method: "HEAD" }));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(response.headers.get("ze-harness-version")).toBe("2/9.9.9");
    expect(response.body).toBeNull();
    expect({ nexts, returns }).toEqual({ nexts: 0, returns: 1 });
  });

  it("in-process HEAD answers a GET route's status with no body", async () => {
    const response = await harness().fetch(new Request(`${base}/v1/health`, { method: "HEAD" }));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-length")).toBe(String(JSON.stringify({ status: "ok" }).length));
    expect(response.body).toBeNull();
  });
});

describe("readBounded (services/contract/body.ts)", () => {
  const chunks = (...parts: string[]): { stream: ReadableStream<Uint8Array>; reads: () => number; cancelled: () => boolean } => {
    let reads = 0;
    let cancelled = false;
    const queue = parts.map((part) => new TextEncoder().encode(part));
    const stream = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          const next = queue.shift();
          if (next === undefined) return controller.close();
          reads++;
          controller.enqueue(next);
        },
        cancel() {
          cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    return { stream, reads: () => reads, cancelled: () => cancelled };
  };

  it("a null stream is an empty body", async () => {
    expect(await readBounded(null, 10)).toEqual(new Uint8Array());
  });

  it("joins every chunk up to and including exactly the limit", async () => {
    const { stream } = chunks("ab", "cd", "e");
    expect(new TextDecoder().decode((await readBounded(stream, 5)) as Uint8Array)).toBe("abcde");
  });

  it("stops at the first chunk past the limit and cancels the stream", async () => {
    const source = chunks("abc", "def", "ghi", "jkl");
    expect(await readBounded(source.stream, 5)).toBe("too_large");
    expect({ reads: source.reads(), cancelled: source.cancelled() }).toEqual({ reads: 2, cancelled: true });
  });

  it("awaits the cancel by default, and not with awaitCancel: false", async () => {
    let cancelSettled = false;
    const slowCancel = (): ReadableStream<Uint8Array> =>
      new ReadableStream<Uint8Array>({
        pull: (controller) => controller.enqueue(new Uint8Array(8)),
        // Settles a full event-loop turn later, after any microtask chain of the reader.
        cancel: () => new Promise<void>((resolvePromise) => setImmediate(() => ((cancelSettled = true), resolvePromise()))),
      });
    expect(await readBounded(slowCancel(), 4)).toBe("too_large");
    expect(cancelSettled).toBe(true);
    // A cancel that never settles (a teed branch) must not hold the answer back.
    const neverCancels = new ReadableStream<Uint8Array>({
      pull: (controller) => controller.enqueue(new Uint8Array(8)),
      cancel: () => new Promise<void>(() => undefined),
    });
    expect(await readBounded(neverCancels, 4, { awaitCancel: false })).toBe("too_large");
  });

  it("a read error rejects", async () => {
    const failing = new ReadableStream<Uint8Array>({ pull: (controller) => controller.error(new Error("broken")) });
    await expect(readBounded(failing, 10)).rejects.toThrow("broken");
  });
});
