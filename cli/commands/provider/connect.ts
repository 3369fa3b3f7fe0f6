import { connectProviderKey, getProvider } from "../../../clients/index.js";
import { readSecret, SecretInterrupted } from "../../secret-input.js";
import { defineCommand, flag } from "../../spec.js";
import { providerIdArg } from "./args.js";

export default defineCommand({
  summary: "Store an API key for a provider, typed on the terminal without echo.",
  description:
    "Requires an interactive terminal: the key is read without echoing it, so it never appears in shell history or process arguments. " +
    "The key replaces the provider's stored connection (key or login) in the global auth.json (mode 0600) in the state directory, shared by every working directory and database; with --remote the remote server stores it. " +
    "Prints the connection's metadata as JSON, never the key.",
  examples: ["<%= config.bin %> provider connect openai", "<%= config.bin %> provider connect openai --label personal"],
  args: { provider: providerIdArg },
  flags: { label: flag.string({ description: "A label for the connection (kept with the key, locally too; provider list shows it)." }) },
  connection: true,
  async run({ args, flags, connect, printJson }) {
    if (process.stdin.isTTY !== true) {
      throw new Error(`provider connect needs an interactive terminal: it reads the key without echo. Run it in a terminal, or set the provider's environment variable instead`);
    }
    const connection = await connect();
    const provider = await getProvider(connection.client, args.provider);
    let key: string;
    try {
      key = (await readSecret(`API key for ${provider.displayName} (${provider.id}, not shown): `)).trim();
    } catch (error) {
      if (!(error instanceof SecretInterrupted)) throw error;
      process.stderr.write("cancelled: no key was stored\n");
      return 130;
    }
    if (key === "") throw new Error("no key was entered; nothing was stored");
    const stored = await connectProviderKey(connection.client, provider.id, { apiKey: key, ...(flags.label !== undefined ? { label: flags.label } : {}) });
    printJson({ connection: stored });
  },
});
