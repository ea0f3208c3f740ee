#!/bin/sh
# The image's entrypoint: run `evolve-action "$@"`, then give what it wrote back to the runner.
#
# evolve-action runs by absolute path, and the image's directories are appended to PATH when
# missing: a workflow-level `env: PATH: …` replaces the image's PATH for every step, which would
# otherwise give `exec: evolve-action: not found` (and no git for evolve-action).
#
# A Docker action runs as root, but the runner's user owns the mounted workspace
# (/github/workspace) and home (/github/home). Files the action creates there (reports, results,
# git's index, Claude Code's config) would stay root-owned and break later steps, the runner's
# clean-up and self-hosted runners. After the command ends, every root-owned file created or
# changed during the run under $GITHUB_WORKSPACE (and under $HOME when it is a /github mount) is
# chowned to that directory's owner. Files that were already root-owned and untouched are left
# alone. Not root, or a root-owned directory: plain `exec`, nothing to restore.
#
# SIGTERM/SIGINT (a cancelled job: `docker stop`) are passed on to evolve-action, which stops its
# agents; the exit status is evolve-action's.
set -u

EVOLVE_ACTION=/opt/evolve-action/bin/evolve-action
for dir in /opt/evolve-action/bin /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
  case ":${PATH:-}:" in *":$dir:"*) ;; *) PATH="${PATH:+$PATH:}$dir" ;; esac
done
export PATH

dirs=""
restore_to_owner() {
  if [ -d "$1" ] && [ "$(stat -c %u "$1")" != 0 ]; then
    dirs="$dirs $1"
  fi
}
if [ "$(id -u)" = 0 ]; then
  [ -n "${GITHUB_WORKSPACE:-}" ] && restore_to_owner "$GITHUB_WORKSPACE"
  case "${HOME:-}" in /github/*) restore_to_owner "$HOME" ;; esac
fi
if [ -z "$dirs" ]; then
  exec "$EVOLVE_ACTION" "$@"
fi

marker="$(mktemp)"
# A background job's stdin would be /dev/null: hand it the container's stdin explicitly.
exec 3<&0
"$EVOLVE_ACTION" "$@" <&3 3<&- &
child=$!
exec 3<&-
trap 'kill -TERM "$child" 2>/dev/null' TERM
trap 'kill -INT "$child" 2>/dev/null' INT
trap 'kill -HUP "$child" 2>/dev/null' HUP
status=0
wait "$child" || status=$?
# `wait` returns early when a trapped signal arrives: wait until the child has really ended.
while kill -0 "$child" 2>/dev/null; do
  status=0
  wait "$child" || status=$?
done

for dir in $dirs; do
  owner="$(stat -c %u:%g "$dir")"
  # -cnewer: created or changed (ctime) since the run began, whatever mtime a tool set.
  find "$dir" -xdev -uid 0 -cnewer "$marker" -exec chown -h "$owner" {} + 2>/dev/null || true
done
rm -f "$marker"
exit "$status"
