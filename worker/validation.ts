// Tool input validation that generates no code, for workerd: Ajv compiles each schema into a
// function from a string, which workerd allows only while the Worker's global scope is evaluated
// ("Code generation from strings disallowed for this context" afterwards). Tools whose schemas
// arrive later (an MCP server's, a tool built per object) are checked by @cfworker/json-schema's
// interpreter instead (draft 2020-12, every error), installed here at module load through the
// seam in services/tools/validate.ts.
import { Validator, type OutputUnit } from "@cfworker/json-schema";
import { useSchemaInterpreter } from "../services/tools/validate.js";

/** `input/path …` as the Ajv-backed messages locate a problem (a JSON pointer into the input). */
function describe(unit: OutputUnit): string {
  const pointer = unit.instanceLocation.replace(/^#/, "");
  return `${pointer === "" ? "input" : `input${pointer}`}: ${unit.error}`;
}

useSchemaInterpreter((schema) => {
  const validator = new Validator(schema as ConstructorParameters<typeof Validator>[0], "2020-12", false);
  return (input) => {
    const result = validator.validate(input);
    return result.valid ? [] : [...new Set(result.errors.map(describe))];
  };
});
