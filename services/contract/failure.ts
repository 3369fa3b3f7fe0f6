// Typed failures: every error a service raises is one of the contract's encoded
// error bodies (carrying its `_tag`), so the HTTP edge only maps `_tag` → status.
import type {
  ConflictErrors,
  ForbiddenErrorEncoded,
  InternalServerErrorEncoded,
  NotFoundErrorEncoded,
  NotFoundResource,
  UnauthorizedErrorEncoded,
  UnavailableErrorEncoded,
  ValidationErrorEncoded,
} from "../../generated/client/types.gen.js";

export type EncodedError =
  | ValidationErrorEncoded
  | UnauthorizedErrorEncoded
  | ForbiddenErrorEncoded
  | NotFoundErrorEncoded
  | ConflictErrors
  | InternalServerErrorEncoded
  | UnavailableErrorEncoded;

/** An error value raised by a service; `body` is exactly what the client receives. */
export class Failure extends Error {
  constructor(readonly body: EncodedError) {
    super(body.message);
    this.name = body._tag;
  }
}

export const isFailure = (value: unknown): value is Failure => value instanceof Failure;

export const validationFailure = (message: string): Failure => new Failure({ _tag: "ValidationError", message });

export const notFound = (resource: NotFoundResource, message: string): Failure =>
  new Failure({ _tag: "NotFoundError", message, resource });

export const conflict = (message: string): Failure => new Failure({ _tag: "ConflictError", message });

export const forbidden = (message: string): Failure => new Failure({ _tag: "ForbiddenError", message });

export const unavailable = (message: string, reason: UnavailableErrorEncoded["reason"] = "service_unavailable"): Failure =>
  new Failure({ _tag: "UnavailableError", message, reason });
