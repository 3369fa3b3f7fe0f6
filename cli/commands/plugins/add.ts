import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { sdk, type AddSessionPluginRequest } from "../../../clients/index.js";
import { readJsonArgument, existingSessionFlag } from "../../args.js";
import { usageError } from "../../errors.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";

const SOURCES = ["file", "package", "git", "bundle", "static"] as const;

export default jsonCommand({
  summary: "Add a Session plugin (replacing the Session's current one); print the Session's plugin status as JSON.",
  description:
    "Give exactly one source: --file PATH (a plugin module on the server's machine; a relative path resolves from the current directory), --package NAME [--package-version V], --git URL [--ref REF], --bundle URL (Worker hosts) or --static ID. " +
    "The host resolves the source to an exact artifact (a file's SHA-256; a package installed from the npm registry at an exact version with the registry's integrity, no package script run; a Git commit) before it records the revision, then activates it; a revision that fails to activate leaves the previous one active. " +
    "--integrity pins the artifact (a mismatch fails with declared_mismatch, and refresh keeps a pinned revision). Repeating an add with the same --revision and flags is idempotent.",
  examples: [
    "<%= config.bin %> plugins add --session SESSION_ID --file ./notes-plugin.mjs --plugin-id example.notes",
    `<%= config.bin %> plugins add --session SESSION_ID --bundle https://plugins.example.com/notes.js --plugin-id example.notes --options '{"folder":"notes"}'`,
  ],
  flags: {
    session: existingSessionFlag("The Session."),
    "plugin-id": flag.string({ description: "The id the plugin must declare." }),
    file: flag.string({ description: "A plugin module file." }),
    package: flag.string({ description: "An npm package name." }),
    "package-version": flag.string({ description: "The exact package version or dist-tag (with --package; default latest)." }),
    git: flag.string({ description: "A Git repository URL." }),
    ref: flag.string({ description: "A full commit, branch or tag (with --git; default the default branch)." }),
    bundle: flag.string({ description: "An https:// URL of a self-contained ES module bundle." }),
    static: flag.string({ description: "A static Session plugin the host links in, by source id." }),
    options: flag.string({ description: "The plugin's options as a JSON object, or - for stdin (default {})." }),
    integrity: flag.string({ description: "Pin the artifact's integrity (sha256:<hex>, sha512-<base64>, git-sha1:<commit>)." }),
    revision: flag.string({ description: "Revision id; generated when omitted. Repeating an add with it is idempotent." }),
  },
  input: async ({ flags }): Promise<AddSessionPluginRequest & { sessionId: string }> => {
    if (flags.session === undefined) throw usageError("--session SESSION_ID is required: plugins are added to a Session");
    if (flags["plugin-id"] === undefined) throw usageError("--plugin-id ID is required");
    const given = SOURCES.filter((name) => flags[name] !== undefined);
    if (given.length !== 1) throw usageError(`give exactly one source: ${SOURCES.map((name) => `--${name}`).join(", ")}`);
    if (flags["package-version"] !== undefined && flags.package === undefined) throw usageError("--package-version needs --package");
    if (flags.ref !== undefined && flags.git === undefined) throw usageError("--ref needs --git");
    const options = flags.options === undefined ? {} : await readJsonArgument(flags.options, "--options");
    if (typeof options !== "object" || options === null || Array.isArray(options)) throw usageError("--options must be a JSON object");
    const source: AddSessionPluginRequest["source"] =
      flags.file !== undefined
        ? { _tag: "File", uri: pathToFileURL(resolve(flags.file)).href }
        : flags.package !== undefined
          ? { _tag: "Package", name: flags.package, ...(flags["package-version"] !== undefined ? { requestedVersion: flags["package-version"] } : {}) }
          : flags.git !== undefined
            ? { _tag: "Git", url: flags.git, ...(flags.ref !== undefined ? { ref: flags.ref } : {}) }
            : flags.bundle !== undefined
              ? { _tag: "Bundle", url: flags.bundle }
              : { _tag: "Static", id: flags.static! };
    return {
      sessionId: flags.session,
      id: flags.revision ?? randomUUID(),
      source,
      resolved: { pluginId: flags["plugin-id"], ...(flags.integrity !== undefined ? { integrity: flags.integrity } : {}) },
      options,
      mcpServers: [],
      skills: [],
    };
  },
  // The Session is read after connecting: a Session id prefix is resolved then (cli/short-ids.ts).
  call: ({ client, server }, { flags }, { sessionId: _typed, ...body }) => sdk.addSessionPlugin({ client, path: { server, sessionId: flags.session! }, body }),
  print: (result) => result.status,
});
