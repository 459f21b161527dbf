// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- bundled as is by wrangler, not compiled
// @ts-nocheck -- bundled by wrangler for workerd; run.mjs drives it.
/* global IAM_BASE_URL, FAULT_BASE_URL */
/**
 * The Worker of the workerd suite: the scenario table's app (../app.mjs, the one Node, Bun and Deno
 * run too), made at module scope, where workerd allows no timer, random value or I/O; its `lazy`
 * routes are made in the first request. IAM_BASE_URL and FAULT_BASE_URL are set by wrangler's
 * --define at bundle time.
 */
import { createApp } from '../app.mjs';

const app = createApp({ iam: IAM_BASE_URL, fault: FAULT_BASE_URL });

export default {
  fetch(request, env, ctx) {
    return app.fetch(request, env, ctx);
  },
};
