import { sdk, unwrap, type McpCredentialStartResponse, type StartMcpCredentialRequest } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { defineCommand, flag } from "../../spec.js";
import { serverNameArg } from "./args.js";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The loopback port of the authorization URL's redirect_uri, when the callback comes back to this machine. */
function callbackPort(start: McpCredentialStartResponse): number | undefined {
  try {
    const redirect = new URL(new URL(start.authorizationUrl).searchParams.get("redirect_uri") ?? "");
    return LOOPBACK.has(redirect.hostname) && redirect.protocol === "http:" ? Number(redirect.port || 80) : undefined;
  } catch {
    return undefined;
  }
}

export default defineCommand({
  summary: "Authorize a remote MCP server with OAuth: open the printed URL, approve, and the credential is stored on the host.",
  description:
    "Starts (or resumes) the authorization, prints the URL on stderr and waits on a loopback listener for the authorization server's redirect, then completes the code exchange on the host and prints the credential status as JSON (never a token). Tokens are kept in the host's auth.json and refreshed as requests need them. Ctrl-C cancels the pending authorization. " +
    "--mcp-callback-port sets the port of the redirect address http://127.0.0.1:PORT/oauth/callback/SERVER (default 19876) of an embedded host; with --remote the server decides it.",
  examples: ["<%= config.bin %> mcp auth SESSION_ID linear", "<%= config.bin %> mcp auth SESSION_ID linear --mcp-callback-port 8765 --client-id my-public-client"],
  args: { sessionId: sessionIdArg, serverName: serverNameArg },
  flags: {
    "client-id": flag.string({ description: "A pre-registered public OAuth client id (instead of dynamic client registration)." }),
    "authorization-server": flag.string({ description: "The authorization server to use, when the MCP server advertises several." }),
    resource: flag.string({ description: "The protected resource to request a token for (default: the server's advertised resource)." }),
  },
  connection: true,
  async run({ args, flags, connect, printJson }) {
    const { listenForCallbacks } = await import("../../../services/mcp/callback.js");
    const connection = await connect();
    const client = connection.client.client;
    const path = { server: connection.server, sessionId: args.sessionId, serverName: args.serverName };
    const body: StartMcpCredentialRequest = {
      ...(flags["client-id"] !== undefined ? { client: { clientId: flags["client-id"], tokenEndpointAuthMethod: "none" as const } } : {}),
      ...(flags["authorization-server"] !== undefined ? { authorizationServer: flags["authorization-server"] } : {}),
      ...(flags.resource !== undefined ? { resource: flags.resource } : {}),
    };
    const start = await unwrap(sdk.startMcpCredential({ client, path, body }));
    const port = callbackPort(start);
    if (port === undefined) {
      process.stderr.write(`Open this URL to authorize ${args.serverName} (the callback goes to the server):\n${start.authorizationUrl}\n`);
      printJson(start.status);
      return 0;
    }
    const listener = await listenForCallbacks(port);
    const cancel = async () => {
      await listener.close();
      await sdk.cancelMcpCredential({ client, path, body: { generation: start.status.generation } }).catch(() => undefined);
      process.stderr.write("\ncancelled: the pending authorization was cancelled\n");
      process.exit(130);
    };
    process.once("SIGINT", cancel);
    try {
      process.stderr.write(`Open this URL to authorize ${args.serverName}:\n${start.authorizationUrl}\n`);
      const callback = await listener.next(args.serverName);
      const { status } = await unwrap(sdk.completeMcpCredentialCallback({ client, path, body: { callback } }));
      printJson(status);
      return status.kind === "authorized" ? 0 : 1;
    } finally {
      process.off("SIGINT", cancel);
      await listener.close();
    }
  },
});
