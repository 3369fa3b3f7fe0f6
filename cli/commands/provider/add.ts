import { connectProviderKey, sdk, unwrap } from "../../../clients/index.js";
import { globalConfigFile } from "../../../services/config/paths.js";
import { resolve } from "node:path";
import { usageError } from "../../errors.js";
import { addProviderEntry, providerEntry, type CompatibleProtocol } from "../../provider-entry.js";
import { readSecret, SecretInterrupted } from "../../secret-input.js";
import { arg, defineCommand, flag } from "../../spec.js";

/** The key: typed without echo on a terminal, else the first line of stdin. Never an argument. */
async function readKey(name: string): Promise<string | undefined> {
  if (process.stdin.isTTY === true) {
    try {
      return (await readSecret(`API key for ${name} (not shown): `)).trim();
    } catch (error) {
      if (error instanceof SecretInterrupted) return undefined;
      throw error;
    }
  }
  const { readFileSync } = await import("node:fs");
  return (readFileSync(0, "utf8").split(/\r?\n/)[0] ?? "").trim();
}

export default defineCommand({
  summary: "Add an OpenAI- or Anthropic-compatible provider to the config, store its key, and list its models.",
  description:
    "Writes `providers.NAME` into the global config.json (or the --config file): `{ definition: { baseURL, protocol: chat (openai) | messages (anthropic), authentication, discovery: true } }`; a new providers map keeps openai, opencode-go and openrouter enabled. " +
    "With --api-key the key is typed without echo on a terminal, or read from the first line of stdin — never from the command line — and stored in the global auth.json (mode 0600) through the server; without it the server gets no credential (authentication none). " +
    "Then the server reloads its providers, discovers the models (GET BASE_URL/models) and the command prints `{ provider, configFile, models }` as JSON (exit 1 when discovery failed; the entry stays). " +
    "A name already in the file, a file that is not JSON, or a bad URL is an error that changes nothing. Writes this machine's config: not with --remote.",
  examples: [
    "<%= config.bin %> provider add local --base-url http://127.0.0.1:8080/v1 --protocol openai",
    "printf '%s\\n' \"$KEY\" | <%= config.bin %> provider add team --base-url https://llm.example.com/v1 --protocol openai --api-key",
  ],
  args: { name: arg.string({ name: "NAME", description: "Provider id: lowercase letters and digits joined by ., _ or - (e.g. local-llm).", required: true }) },
  flags: {
    "base-url": flag.string({ description: "The API base URL (http or https), e.g. http://127.0.0.1:8080/v1." }),
    protocol: flag.string({ description: "The server's API: openai (Chat Completions) or anthropic (Messages).", options: ["openai", "anthropic"], default: "openai" }),
    "api-key": flag.boolean({ description: "Ask for an API key (hidden prompt on a terminal, else the first line of stdin) and store it in auth.json." }),
    label: flag.string({ description: "A label for the stored key." }),
  },
  connection: true,
  async run({ args, flags, connect, printJson }) {
    if (flags.remote !== undefined) throw usageError("provider add writes this machine's config file; run it on the server's machine (without --remote)");
    if (flags["base-url"] === undefined) throw usageError("--base-url URL is required");
    const entry = providerEntry({ name: args.name, baseURL: flags["base-url"], protocol: flags.protocol as CompatibleProtocol, withKey: flags["api-key"] === true });
    let key: string | undefined;
    if (flags["api-key"]) {
      key = await readKey(args.name);
      if (key === undefined) {
        process.stderr.write("cancelled: nothing was written\n");
        return 130;
      }
      if (key === "") throw usageError("--api-key: no key was entered (type it, or pipe it on stdin); nothing was written");
    }
    const configFile = flags.config !== undefined ? resolve(flags.config) : globalConfigFile(process.env);
    const undo = addProviderEntry(configFile, args.name, entry);
    const connection = await connect();
    const client = connection.client.client;
    try {
      // The daemon keeps the providers it started with until a reload; an embedded host just read the file.
      const reloaded = await unwrap(sdk.reload({ client, body: {} }));
      if (reloaded.result !== "reloaded") throw Object.assign(new Error(`the server did not reload its configuration; ${configFile} was left unchanged`), { _tag: "ProviderInvalid" });
      if (key !== undefined) await connectProviderKey(connection.client, args.name, { apiKey: key, ...(flags.label !== undefined ? { label: flags.label } : {}) });
    } catch (error) {
      undo();
      throw error;
    }
    const refreshed = await unwrap(sdk.refreshProviderModels({ client, body: { providerId: args.name } }));
    const outcome = refreshed.providers.find((provider) => provider.providerId === args.name);
    const models = refreshed.snapshot.models.filter((model) => model.providerId === args.name).map((model) => ({ ref: model.ref, displayName: model.displayName, availability: model.availability.status }));
    printJson({ provider: args.name, configFile, discovery: outcome ?? { providerId: args.name, status: "unchanged" }, models });
    return outcome?.status === "failed" ? 1 : 0;
  },
});
