import { deleteProviderConnection, getProvider } from "../../../clients/index.js";
import { defineCommand } from "../../spec.js";
import { providerIdArg } from "./args.js";

export default defineCommand({
  summary: "Remove a provider's stored connection (an API key or a login).",
  description:
    "Deletes the provider's connection from the host's auth.json and prints `{ success, connection }` (the removed connection's metadata) as JSON. " +
    "A key from the environment or a configured options.apiKey is not stored, so it stays in effect.",
  examples: ["<%= config.bin %> provider disconnect openai"],
  args: { provider: providerIdArg },
  connection: true,
  async run({ args, connect, printJson }) {
    const connection = await connect();
    const provider = await getProvider(connection.client, args.provider);
    if (provider.connection === undefined) throw new Error(`provider "${provider.id}" has no stored connection; nothing was removed`);
    const success = await deleteProviderConnection(connection.client, provider.id, provider.connection.connectionId);
    printJson({ success, connection: provider.connection });
  },
});
