#!/usr/bin/env bash
# The one install of evolve-action, shared by the Docker image and .ci/run (so CI exercises the
# image's install steps): create a virtual environment (never the system pip) and install the
# package from this repository into it.
#
#   scripts/install.sh [--editable] [--extras dev] [--compile] [--deps-only|--no-deps]
#                      [--harness codex] VENV_DIR
#
#   --editable   install in development mode (CI and contributors)
#   --extras X   install the optional dependency group X (e.g. dev)
#   --compile    byte-compile the installed package (the image: faster start-up)
#   --deps-only  install only pyproject.toml's dependencies, not the package (the image's first,
#                cached layer: it needs only pyproject.toml, so a change under src/ keeps it)
#   --no-deps    install only the package (the image's second layer, after --deps-only)
#   --harness X  also install the agent CLI of harness X: `codex` runs `evolve-action install codex`
#                (the pinned @openai/codex release from the npm registry, hash-checked, unpacked
#                into VENV_DIR/codex, where evolve-action finds it without PATH; no node needed).
#                (Claude Code needs no step: it comes bundled in the claude-agent-sdk wheel.)
set -euo pipefail


editable=0
extras=""
compile=0
deps="all"
venv=""
harnesses=()
while [ $# -gt 0 ]; do
  case "$1" in
    --editable) editable=1 ;;
    --extras) extras="$2"; shift ;;
    --compile) compile=1 ;;
    --deps-only) deps="only" ;;
    --no-deps) deps="none" ;;
    --harness) harnesses+=("$2"); shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    -*) echo "install.sh: unknown option $1" >&2; exit 2 ;;
    *) venv="$1" ;;
  esac
  shift
done
if [ -z "$venv" ]; then
  echo "install.sh: give the virtual environment's directory" >&2
  exit 2
fi

src="$(cd "$(dirname "$0")/.." && pwd)"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

for harness in ${harnesses[@]+"${harnesses[@]}"}; do
  case "$harness" in
    codex) ;;
    claude) echo "install.sh: Claude Code comes with the package (claude-agent-sdk); nothing to add" >&2 ;;
    *) echo "install.sh: unknown harness $harness (want codex)" >&2; exit 2 ;;
  esac
done

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if [ "$deps" = only ]; then
  # pyproject.toml's [project] dependencies (and those of --extras), without the package.
  requirements="$(mktemp)"
  "$venv/bin/python" - "$src/pyproject.toml" "$extras" >"$requirements" <<'PY'
import sys
import tomllib

with open(sys.argv[1], "rb") as handle:
    project = tomllib.load(handle)["project"]
wanted = list(project.get("dependencies", []))
for extra in filter(None, sys.argv[2].split(",")):
    wanted += project.get("optional-dependencies", {})[extra]
print("\n".join(wanted))
PY
  "$venv/bin/pip" install -q --no-cache-dir -r "$requirements"
  rm -f "$requirements"
  exit 0
fi
no_deps=()
if [ "$deps" = none ]; then
  no_deps=(--no-deps)
fi
target="$src"
if [ -n "$extras" ]; then
  target="$src[$extras]"
fi
if [ "$editable" = 1 ]; then
  "$venv/bin/pip" install -q "${no_deps[@]}" -e "$target"
else
  # A regular (non-editable) install: the image must not depend on the source tree afterwards.
  "$venv/bin/pip" install -q --no-cache-dir "${no_deps[@]}" "$target"
fi
if [ "$compile" = 1 ]; then
  "$venv/bin/python" -m compileall -q "$venv/lib" >/dev/null
fi
"$venv/bin/evolve-action" --version
for harness in ${harnesses[@]+"${harnesses[@]}"}; do
  if [ "$harness" = codex ]; then
    "$venv/bin/evolve-action" install codex --prefix "$venv"
  fi
done
