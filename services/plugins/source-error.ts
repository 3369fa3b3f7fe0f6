// A plugin source that cannot be loaded, apart from source.ts (whose module loading imports by
// file path, which the Worker's bundle must not contain: workerd loads no module by a computed
// specifier). `message` is safe to show (it names only the source).
export class PluginSourceError extends Error {
  readonly _tag = "PluginSourceError" as const;
  /** `fatal` fails the whole activation instead of skipping the plugin. */
  constructor(
    message: string,
    readonly fatal = false,
  ) {
    super(message);
    this.name = "PluginSourceError";
  }
}
