#!/bin/sh
# node_setup.sh — playwright-core from the npm registry (the version in
# package-lock.json), installed once under build/web-node; prints that folder.
# Used by test_web.sh and make bench-web. Chromium is Debian's (/usr/bin/chromium):
# playwright's own browser download is never used.
set -eu
node_dir=build/web-node
if ! cmp -s tests/web/package-lock.json "$node_dir/package-lock.json" 2>/dev/null ||
   [ ! -d "$node_dir/node_modules/playwright-core" ]; then
    mkdir -p "$node_dir"
    cp tests/web/package.json tests/web/package-lock.json "$node_dir/"
    (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error) >&2 ||
        { echo "attnviz: npm ci in $node_dir failed (playwright-core from the npm registry)" >&2; exit 1; }
fi
echo "$node_dir"
