// hey-api configuration: types, fetch SDK and zod schemas from generated/openapi.json.
// hey-api wipes its output folder on every run, so nothing else lives in generated/client.
export default {
  // tools/generate.mjs passes generated/openapi.json without its HEAD operations.
  input: process.env.ZE_OPENAPI_TS_INPUT ?? "./generated/openapi.json",
  output: { path: "generated/client", clean: true, module: { extension: ".js" } },
  plugins: [
    "@hey-api/client-fetch",
    "@hey-api/typescript",
    { name: "zod" },
    { name: "@hey-api/sdk", validator: { response: "zod" } },
  ],
};
