/**
 * `@studio/gateway/tooling`: the gateway's part a bench drives on its own (docs/design/workspaces.md): the HTTP/1.1
 * keep-alive pool the bare Bun proxy of the `hop` case forwards with.
 */
export { Pool } from './forward/http1';
