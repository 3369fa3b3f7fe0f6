import { sdk, unwrap, type WorkspaceListPage } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { defineCommand, flag } from "../../spec.js";
import { workspacePathValue } from "../../workspace-path.js";
import { filesTable, formatFlag } from "../../format.js";

export default defineCommand({
  summary: "Print a page of a directory's direct children in a Session's workdir as JSON.",
  description:
    "Prints `{ path, directoryIdentity, entries: [{ path: { bytesBase64, path }, kind: file|directory|symlink|other, size?, modifiedAt }], next? }`: at most 128 entries, sorted by name bytes (`path` is the text of the exact bytes, left out when they are not UTF-8); " +
    "symlinks are not followed, `.git` and the workdir's private state are left out. Pass `next` as --cursor for the next page, or use --all to read every page.",
  examples: ["<%= config.bin %> files list SESSION_ID", "<%= config.bin %> files list SESSION_ID --path src --all"],
  args: { sessionId: sessionIdArg },
  flags: {
    path: flag.string({ description: "The directory, relative to the workdir (default: the workdir)." }),
    base64: flag.boolean({ description: "--path is the exact path bytes in Base64 (bytesBase64)." }),
    cursor: flag.string({ description: "Continue after this page's `next`." }),
    all: flag.boolean({ description: "Follow `next` and print every entry in one page.", exclusive: ["cursor"] }),
    format: formatFlag,
  },
  connection: true,
  async run({ args, flags, connect, printJson }) {
    const path = flags.path === undefined ? undefined : workspacePathValue(flags.path, flags.base64);
    const connection = await connect();
    const read = (cursor: string | undefined) =>
      unwrap(
        sdk.listFiles({
          client: connection.client.client,
          path: { server: connection.server, sessionId: args.sessionId },
          query: { ...(path !== undefined ? { path } : {}), ...(cursor !== undefined ? { cursor } : {}) },
        }),
      );
    let page: WorkspaceListPage = await read(flags.cursor);
    if (flags.all) {
      const entries = [...page.entries];
      while (page.next !== undefined) {
        page = await read(page.next);
        entries.push(...page.entries);
      }
      page = { path: page.path, directoryIdentity: page.directoryIdentity, entries };
    }
    if (flags.format === "table") process.stdout.write(filesTable(page));
    else printJson(page);
  },
});
