/** A configuration or storage problem that stops the host from starting. */
export class HarnessStartupError extends Error {
  constructor(
    readonly tag: string,
    message: string,
  ) {
    super(message);
    this.name = tag;
  }
}
