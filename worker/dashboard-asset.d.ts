// The built dashboard page, inlined into a Worker bundle by tools/worker/bundle.mjs (from
// dist/dashboard.json); null when the checkout was never built.
declare module "ze-harness:dashboard-asset" {
  const asset: { readonly html: string; readonly scriptHash: string } | null;
  export default asset;
}
