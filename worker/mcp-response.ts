// The response bound of the Worker's MCP transport: the SDK reads an answer whole before
// worker/mcp.ts sees it and the isolate has 128 MB, so every answer (a JSON body, a POST's SSE
// stream, one event of the standalone GET stream) is cut off past `maxResponseBytes` with a
// typed McpResponseTooLarge, never an isolate out of memory.

/**
 * The most bytes one MCP answer may carry (a JSON body, a POST's SSE stream, one event of the
 * standalone GET stream): the isolate has 128 MB for everything it runs, and the SDK reads an
 * answer whole before anything here sees it.
 */
export const MAX_MCP_RESPONSE_BYTES = 16 * 1024 * 1024;

/** An MCP server's answer went past `maxResponseBytes`: a typed limit, never an isolate out of memory. */
export class McpResponseTooLarge extends Error {
  readonly _tag = "McpResponseTooLarge" as const;
  constructor(readonly limit: number) {
    super(`the MCP server's answer is over the ${limit}-byte response limit`);
    this.name = "McpResponseTooLarge";
  }
}

export const tooLarge = (error: unknown): McpResponseTooLarge | undefined => {
  for (let cause = error, depth = 0; typeof cause === "object" && cause !== null && depth < 4; cause = (cause as { cause?: unknown }).cause, depth++) {
    if ((cause as { _tag?: unknown })._tag === "McpResponseTooLarge") return cause as McpResponseTooLarge;
  }
  return undefined;
};

/**
 * `response` whose body errors with McpResponseTooLarge once more than `limit` bytes arrived (a
 * declared larger Content-Length is refused before reading). On the standalone GET event
 * stream the count restarts at each event boundary, so only one event is bounded there.
 */
export function boundedResponse(response: Response, limit: number, perEvent: boolean): Response {
  if (response.body === null) return response;
  const declared = Number(response.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > limit) {
    void response.body.cancel().catch(() => undefined);
    throw new McpResponseTooLarge(limit);
  }
  let seen = 0;
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit) {
          controller.error(new McpResponseTooLarge(limit));
          return;
        }
        if (perEvent) {
          const text = new TextDecoder().decode(chunk.subarray(Math.max(0, chunk.byteLength - 4096)));
          const boundary = Math.max(text.lastIndexOf("\n\n"), text.lastIndexOf("\r\n\r\n"));
          if (boundary !== -1) seen = 0;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
}
