// The one failure a workspace observation raises for a feature it refuses to interpret
// (external filters, sparse checkout, submodules, …): the contract's 422
// `WorkspaceUnsupportedError`, returned by the handlers as a declared status.
import type { WorkspaceUnsupportedErrorEncoded, WorkspaceUnsupportedFeature } from "../../../generated/client/types.gen.js";

export class WorkspaceUnsupported extends Error {
  readonly body: WorkspaceUnsupportedErrorEncoded;
  constructor(feature: WorkspaceUnsupportedFeature, message: string) {
    super(message);
    this.name = "WorkspaceUnsupportedError";
    this.body = { _tag: "WorkspaceUnsupportedError", message, feature };
  }
}

export const isWorkspaceUnsupported = (value: unknown): value is WorkspaceUnsupported => value instanceof WorkspaceUnsupported;
