# The evolve-action container (action.yml: `runs.using: docker`, `image: Dockerfile`).
#
# Root, on purpose (docs/action.md, "Root or not"): GitHub runs Docker actions as root and documents
# that images must not set USER; the runner-owned mounts (/github/workspace, /github/file_commands)
# are writable to root only when the runner's uid is not known in advance. Agents and `command`
# assertions never run as root: they run as the unprivileged user `evolve-agent` created below
# (EVOLVE_AGENT_USER picks another), and concurrent workspaces as `evolve-agent-1` … `-7` (one uid
# each, so one session cannot write another's workspace), which cannot read our processes' environment, the Docker
# socket, the checkout's .git, /github/file_commands, the event file or $HOME, and inside
# bubblewrap where the runner's kernel allows it (docs/action.md, "Threat model"); their
# environment never holds the GitHub token or INPUT_* values.
FROM python:3.12-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/evolve-action \
    PATH=/opt/evolve-action/bin:$PATH

# git: changed files and base results; bubblewrap: the agent sandbox. The workspace is owned by
# the runner's uid, not root: without safe.directory git refuses it ("dubious ownership"). The
# container sees only the repositories the workflow checked out (also under a checkout `path:`),
# so every directory is trusted here.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates bubblewrap \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log \
      /usr/share/doc/* /usr/share/man/* \
 && git config --system --add safe.directory '*' \
 && useradd --system --uid 2001 --user-group --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin evolve-agent \
 && for i in 1 2 3 4 5 6 7; do \
      useradd --system --uid "$((2001 + i))" --user-group --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin "evolve-agent-$i"; \
    done

# The same install script .ci/run uses, in two layers: the dependencies (from pyproject.toml
# only, so a change under src/ reuses this layer), then the package itself. No pip cache is
# kept; the dev extras (tests, linters) are never installed here.
COPY pyproject.toml README.md /tmp/evolve-action/
COPY scripts/install.sh /tmp/evolve-action/scripts/install.sh
RUN /tmp/evolve-action/scripts/install.sh --deps-only /opt/evolve-action \
 && rm -rf /root/.cache
COPY src /tmp/evolve-action/src
RUN /tmp/evolve-action/scripts/install.sh --no-deps --compile /opt/evolve-action \
 && rm -rf /tmp/evolve-action /root/.cache

# Extra agent CLIs baked into the image (docs/codex.md): `--build-arg EXTRA_HARNESSES=codex` adds
# OpenAI Codex (about 300 MB), so openai/* models run without a download per job. The default image
# stays slim; the action's `extra_harnesses: codex` input installs it at run time instead.
ARG EXTRA_HARNESSES=""
RUN for harness in $(echo "$EXTRA_HARNESSES" | tr ',' ' '); do \
      evolve-action install "$harness" --prefix /opt/evolve-action || exit 1; \
    done

# Runs /opt/evolve-action/bin/evolve-action "$@" (by absolute path: a workflow's `env: PATH:` may
# replace the image's PATH) and gives files it wrote in /github/workspace (and /github/home) back to
# the runner's user (docs/container.md).
COPY scripts/entrypoint.sh /usr/local/bin/evolve-action-entrypoint
ENTRYPOINT ["/usr/local/bin/evolve-action-entrypoint"]
