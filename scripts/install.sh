#!/usr/bin/env bash
# The one install of evolve-action, shared by the Docker image and .ci/run (so CI exercises the
# image's install steps): create a virtual environment (never the system pip) and install the
# package from this repository into it.
#
#   scripts/install.sh [--editable] [--extras dev] [--compile] VENV_DIR
#
#   --editable   install in development mode (CI and contributors)
#   --extras X   install the optional dependency group X (e.g. dev)
#   --compile    byte-compile the installed package (the image: faster start-up)
set -euo pipefail

editable=0
extras=""
compile=0
venv=""
while [ $# -gt 0 ]; do
  case "$1" in
    --editable) editable=1 ;;
    --extras) extras="$2"; shift ;;
    --compile) compile=1 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
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

python3 -m venv "$venv"
target="$src"
if [ -n "$extras" ]; then
  target="$src[$extras]"
fi
if [ "$editable" = 1 ]; then
  "$venv/bin/pip" install -q -e "$target"
else
  # A regular (non-editable) install: the image must not depend on the source tree afterwards.
  "$venv/bin/pip" install -q --no-cache-dir "$target"
fi
if [ "$compile" = 1 ]; then
  "$venv/bin/python" -m compileall -q "$venv/lib" >/dev/null
fi
"$venv/bin/evolve-action" --version
