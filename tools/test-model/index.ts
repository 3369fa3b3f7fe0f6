// The scripted model server every harness test talks to through the real openai and
// @anthropic-ai/sdk clients. See README.md for the base-URL conventions.
export { credentialHash, startTestModel, type TestModel, type TestModelOptions } from "./server.js";
export type {
  ModelEvent,
  Protocol,
  RecordedRequest,
  ScriptedError,
  ScriptedHang,
  ScriptedResponse,
  ScriptedTurn,
  ScriptedUsage,
  StopKind,
} from "./script.js";
export { scriptProblem } from "./script.js";
export { directiveTurn } from "./directives.js";
