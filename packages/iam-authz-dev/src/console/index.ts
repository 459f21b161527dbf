/**
 * `iam-authz-dev/console`: the development IAM's web console as a handler of its own, for mounting it
 * on another server. `startDevIam` already serves it at `/console`; most users need nothing here.
 */
export { createConsole, type ConsoleOptions, type DevIamConsole } from './handler.js';
export type { ConsoleHost } from './host.js';
export { isConsolePath, serveConsole } from './node-http.js';
export type { ConsoleRequest, ConsoleResponse } from './http.js';
