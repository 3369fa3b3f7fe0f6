// A credential value that cannot leak by accident: JSON, string conversion and Node's inspect
// all print `[redacted]`. Only `reveal()` returns the value, and only adapters call it, to set
// the request's authentication header.
import { inspect } from "node:util";

const REDACTED = "[redacted]";

export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The credential itself. Call only where it goes on the wire. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return `Secret(${REDACTED})`;
  }
}

export const isSecret = (value: unknown): value is Secret => value instanceof Secret;
