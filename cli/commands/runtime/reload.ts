import { sdk, unwrap } from "../../../clients/index.js";
import { defineCommand } from "../../spec.js";

export default defineCommand({
  summary: "Reload the runtime: plugins, and the model catalog (catalog data read again, discovery repeated); print the result as JSON.",
  description:
    "Prints `{ result: reloaded | rejected, plugins }` (exit 1 when rejected; the current generation then stays). " +
    "The model catalog is compiled again from the cached or bundled catalog data and each discovery provider's models are listed again. Running Turns keep the catalog and plugins they started with.",
  examples: ["<%= config.bin %> runtime reload"],
  connection: true,
  async run({ connect, printJson }) {
    const connection = await connect();
    const result = await unwrap(sdk.reload({ client: connection.client.client, body: {} }));
    printJson(result);
    return result.result === "reloaded" ? 0 : 1;
  },
});
