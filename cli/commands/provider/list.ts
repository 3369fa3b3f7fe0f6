import { sdk, type RuntimeProvidersResponse } from "../../../clients/index.js";
import { jsonCommand } from "../../json-command.js";
import { formatFlag, providersTable } from "../../format.js";

export default jsonCommand<{}, { format: typeof formatFlag }, undefined, RuntimeProvidersResponse>({
  summary: "Print every provider's availability, credential source, connection and logins as JSON (never a credential).",
  description:
    "Prints `{ providers: [{ id, displayName, availability, source, via?, connection?, methods, logins }] }`: `source` is stored (auth.json), environment (a variable or a configured options.apiKey), via, or none; `connection` is the stored connection's metadata; `logins` are the methods `provider login` accepts.",
  examples: ["<%= config.bin %> provider list", "<%= config.bin %> provider list --format table"],
  flags: { format: formatFlag },
  call: ({ client }) => sdk.providers({ client }),
  table: providersTable,
});
