// What the Worker bundle carries instead of reading files at run time (a Worker has no package
// directory): the release it advertises and the OpenAPI document it serves at /openapi.json.
import pkg from "../package.json" with { type: "json" };
import openapi from "../generated/openapi.json" with { type: "json" };

export const RELEASE: string = pkg.version;
export const OPENAPI_DOCUMENT: string = JSON.stringify(openapi);
