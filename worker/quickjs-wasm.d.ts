// The QuickJS variant's WebAssembly file as a module import (worker/codemode.ts). In workerd a
// `.wasm` import is a compiled `WebAssembly.Module` (tools/worker/bundle.mjs copies the file next
// to the bundle; the runtime's CompiledWasm module rule loads it).
declare module "@jitl/quickjs-wasmfile-release-sync/wasm" {
  const module: WebAssembly.Module;
  export default module;
}
