# shellcheck shell=bash
# Shared by scripts/demo, scripts/test and .ci/run (sourced, not executed).
#
# ensure_venv makes sure "$VENV" exists and has django-mcp installed (editable) with the
# extras the caller needs. It is idempotent: a stamp file in the venv records what was
# installed (pyproject.toml's hash, extras, Django requirement, Python version), and pip
# only runs when that changes. Environment:
#
#   VENV               the virtualenv (default: .venv at the repository root)
#   PYTHON             the interpreter that creates it when missing (default: python3.11)
#   DJANGO_MCP_EXTRAS  the pip extras to install (default: test)
#   DJANGO_SPEC        an extra requirement such as "Django>=6,<7" (default: none, which lets
#                      pip pick the newest Django that the interpreter supports)

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$REPO/.venv}"
case "$VENV" in /*) ;; *) VENV="$REPO/$VENV" ;; esac
PYTHON="${PYTHON:-python3.11}"
DJANGO_MCP_EXTRAS="${DJANGO_MCP_EXTRAS:-test}"
DJANGO_SPEC="${DJANGO_SPEC:-}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

say() { echo "$(basename "$0"): $*"; }
die() {
    echo "$(basename "$0"): $*" >&2
    exit 1
}

# The interpreter to create venvs with: $PYTHON itself if it runs, else (for a name such as
# python3.12 that a pyenv shim knows but that is not the selected pyenv version) the newest
# matching pyenv installation.
resolve_python() {
    if "$PYTHON" -c 'import sys' >/dev/null 2>&1; then
        command -v "$PYTHON"
        return 0
    fi
    local version="${PYTHON#python}" candidate=""
    for candidate in "${PYENV_ROOT:-$HOME/.pyenv}/versions/$version".*/bin/"$PYTHON"; do
        [ -x "$candidate" ] || continue
        "$candidate" -c 'import sys' >/dev/null 2>&1 && echo "$candidate"
    done | sort -V | tail -n 1 | grep . || die "$PYTHON not found (set PYTHON to an interpreter)"
}

ensure_venv() {
    if [ ! -x "$VENV/bin/python" ]; then
        local python
        python="$(resolve_python)"
        say "creating $VENV with $python"
        "$python" -m venv "$VENV" || { rm -rf "$VENV"; die "cannot create $VENV"; }
    fi
    "$VENV/bin/python" -c 'import sys' 2>/dev/null \
        || die "$VENV/bin/python does not run; remove $VENV and try again"
    local stamp="$VENV/.django-mcp-installed" want
    want="$(
        {
            "$VENV/bin/python" -c 'import sys; print(sys.version)'
            echo "extras=$DJANGO_MCP_EXTRAS spec=$DJANGO_SPEC"
            cat "$REPO/pyproject.toml"
        } | sha256sum | cut -d' ' -f1
    )"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
        && "$VENV/bin/python" -c 'import django_mcp' 2>/dev/null; then
        return 0
    fi
    say "installing django-mcp[$DJANGO_MCP_EXTRAS]${DJANGO_SPEC:+ with $DJANGO_SPEC} into $VENV"
    local spec=()
    [ -n "$DJANGO_SPEC" ] && spec=("$DJANGO_SPEC")
    (cd "$REPO" && "$VENV/bin/python" -m pip install -q -e ".[$DJANGO_MCP_EXTRAS]" "${spec[@]}") \
        || die "pip install failed"
    echo "$want" >"$stamp"
}
