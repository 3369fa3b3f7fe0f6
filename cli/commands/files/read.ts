import { Buffer } from "node:buffer";
import { readWorkspaceFile } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { arg, defineCommand, flag } from "../../spec.js";
import { base64Flag, workspacePathValue } from "../../workspace-path.js";

export default defineCommand({
  summary: "Read one file of a Session's workdir and print it as JSON.",
  description:
    "Reads the file in chunks, checks offsets, size and SHA-256, and prints `{ kind: text, mimeType, version, size, sha256, text }` or, for a PNG, JPEG, GIF or WebP image, `bytesBase64` instead of `text`. " +
    "A file that is not there, not the --expected-version, binary, or not a regular file prints `{ kind: absent|changed|binary|unsupported, … }` (exit 0).",
  examples: ["<%= config.bin %> files read SESSION_ID README.md"],
  args: { sessionId: sessionIdArg, path: arg.string({ name: "PATH", description: "The file, relative to the workdir.", required: true }) },
  flags: {
    base64: base64Flag,
    "expected-version": flag.string({ description: "Read only this version (a `version` printed before)." }),
  },
  connection: true,
  async run({ args, flags, connect, printJson }) {
    const path = { bytesBase64: workspacePathValue(args.path, flags.base64) };
    const connection = await connect();
    const read = await readWorkspaceFile(connection.client, {
      server: connection.server,
      sessionId: args.sessionId,
      path,
      ...(flags["expected-version"] !== undefined ? { expectedVersion: flags["expected-version"] } : {}),
    });
    if (read.kind === "text" || read.kind === "image") {
      const { bytes, ...rest } = read;
      const content = read.kind === "text" ? { text: Buffer.from(bytes).toString("utf8") } : { bytesBase64: Buffer.from(bytes).toString("base64") };
      return printJson({ ...rest, ...content });
    }
    printJson(read);
  },
});
