// Protocol version negotiation on top of the SDK client. The SDK always offers its latest version
// and accepts any it knows; Core accepts only the configured `protocolVersions`. This transport
// wrapper offers the first configured version in `initialize` and turns an answer with any other
// version into that request's JSON-RPC error, so `client.connect` fails with a typed reason.
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from "@modelcontextprotocol/sdk/types.js";

/** The server answered with a protocol version the server entry does not accept. */
export class ProtocolVersionRejected extends Error {
  readonly _tag = "ProtocolVersionRejected" as const;
  constructor(
    readonly offered: string,
    readonly answered: string,
  ) {
    super(`the server answered protocol version ${JSON.stringify(answered)}; accepted: ${offered}`);
    this.name = "ProtocolVersionRejected";
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export class NegotiatingTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  /** The version the server answered and we accepted. */
  negotiated: string | undefined;
  /** Set when the server answered a version we do not accept. */
  rejected: ProtocolVersionRejected | undefined;
  private initializeId: RequestId | undefined;

  constructor(
    readonly inner: Transport,
    private readonly versions: readonly string[],
  ) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onmessage = (message, extra) => this.receive(message, extra);
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ("method" in message && message.method === "initialize" && "id" in message && isObject(message.params)) {
      this.initializeId = message.id;
      const offered = { ...message, params: { ...message.params, protocolVersion: this.versions[0] } };
      return this.inner.send(offered as JSONRPCMessage, options);
    }
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if (this.initializeId !== undefined && "id" in message && message.id === this.initializeId && "result" in message) {
      this.initializeId = undefined;
      const answered = isObject(message.result) ? message.result["protocolVersion"] : undefined;
      if (typeof answered !== "string" || !this.versions.includes(answered)) {
        this.rejected = new ProtocolVersionRejected(this.versions.join(", "), String(answered));
        this.onmessage?.({ jsonrpc: "2.0", id: message.id, error: { code: -32602, message: this.rejected.message } } as JSONRPCMessage, extra);
        return;
      }
      this.negotiated = answered;
    }
    this.onmessage?.(message, extra);
  }
}
