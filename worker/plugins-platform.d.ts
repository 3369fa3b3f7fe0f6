// The part of workerd's `cloudflare:workers` module the Worker's runtime plugins use (beside
// authority-platform.d.ts): an RpcTarget subclass crosses RPC as a stub the Dynamic Worker calls back.
declare module "cloudflare:workers" {
  export class RpcTarget {
    constructor();
  }
}
