// `execute` on the Node host: the tool (execute-tool.ts) over services/codemode/run.ts, whose
// worker-thread engine is imported at the first execution, so a Turn that never runs a script does
// not load it.
import { createExecuteTool } from "./execute-tool.js";

export { createExecuteTool, scriptTools, MAX_EXECUTE_CODE_CHARS, MAX_EXECUTE_RESULT_BYTES, type CodeModeRunner, type ExecuteInput } from "./execute-tool.js";

export const executeTool = createExecuteTool(async (request) => (await import("../codemode/run.js")).runCodeMode(request));
