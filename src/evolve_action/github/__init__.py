"""GitHub I/O: the event context, the inputs and outputs, workflow commands, the changed files and
touched skills, and the REST client (sticky comment, commit-back, file reads).

Owns: everything the action says to or reads from GitHub. Guarantees: a value can never break out of
a workflow command; the sticky comment is only ever a comment of ours (the marker on its first line,
written by the token's own identity); commits only ever touch repository-relative paths. Never reads
`os.environ` (the environment is passed in).

Files (private; import from this package):
- `_api`: the REST client through PyGithub: pull requests, changed files, file reads, the token's
  identity, the sticky comment, commit-back.
- `_retry`: the client's retry and pacing policy, and how it reads a rate limit.
- `_errors`: the client's errors, and the translation of GitHub's answers into them.
- `_results`: the typed results the client returns (pull requests, files, comments, commits).
- `_comments`: the sticky comment's body rules (the marker on its first line, the record on its last).
- `_outbound`: the redaction gate every outgoing body passes, and the paths a commit may carry.
- `_context`: the runner's `GITHUB_*` variables and the event payload, validated.
- `_inputs`: the action's `INPUT_*` values, validated.
- `_outputs`: step outputs and the step summary.
- `_touched`: changed paths → touched skills.
- `_workflow`: workflow commands: annotations, masks, groups.
"""

from evolve_action.github._api import (
    BOT_LOGIN,
    DEFAULT_API_URL,
    FILES_API_CAP,
    LOGIN,
    MAX_COMMENT_CHARS,
    GitHubClient,
    RepositoryClient,
)
from evolve_action.github._comments import (
    is_sticky,
)
from evolve_action.github._context import (
    MAX_EVENT_BYTES,
    SUPPORTED_EVENTS,
    Event,
    GitHubContext,
    PullRequest,
    checkout_kind,
    comment_refusal,
    declared_permissions,
    fork_target_refusal,
    git_env,
    inactive_message,
    load_context,
    read_only_scopes,
    restore_workspace_owner,
    unsupported_fails,
    unsupported_message,
)
from evolve_action.github._errors import (
    GitHubApiError,
    GitHubAuthError,
    GitHubNotFoundError,
    GitHubPermissionError,
    GitHubRateLimitError,
)
from evolve_action.github._inputs import (
    COMMENT_MODES,
    FAIL_ON,
    INPUT_DEFAULTS,
    MODES,
    SECRET_INPUTS,
    TIERS,
    ActionInputs,
    CommentMode,
    FailOn,
    Mode,
    Tier,
    input_value,
    read_inputs,
)
from evolve_action.github._outbound import (
    committable_path,
)
from evolve_action.github._outputs import (
    MAX_SUMMARY_BYTES,
    OUTPUT_NAMES,
    ActionOutputs,
    CommandFiles,
    Status,
    append_summary,
    format_output,
    mask_secrets,
    write_outputs,
)
from evolve_action.github._results import (
    ChangedFile,
    ChangedFiles,
    CommentInfo,
    CommentResult,
    CommitAuthor,
    CommitOutcome,
    Committed,
    FileChange,
    HeadMoved,
    NothingToCommit,
    PullRequestInfo,
    TokenIdentity,
)
from evolve_action.github._retry import (
    RetryPolicy,
)
from evolve_action.github._touched import (
    ChangedPath,
    ChangeStatus,
    Touched,
    TouchedSkill,
    git_changed_paths,
    touched_skills,
)
from evolve_action.github._workflow import (
    annotate,
    command,
    escape_data,
    escape_property,
    is_actions,
    mask,
)

__all__ = [
    "BOT_LOGIN",
    "COMMENT_MODES",
    "DEFAULT_API_URL",
    "FAIL_ON",
    "FILES_API_CAP",
    "INPUT_DEFAULTS",
    "LOGIN",
    "MAX_COMMENT_CHARS",
    "MAX_EVENT_BYTES",
    "MAX_SUMMARY_BYTES",
    "MODES",
    "OUTPUT_NAMES",
    "SECRET_INPUTS",
    "SUPPORTED_EVENTS",
    "TIERS",
    "ActionInputs",
    "ActionOutputs",
    "ChangeStatus",
    "ChangedFile",
    "ChangedFiles",
    "ChangedPath",
    "CommandFiles",
    "CommentInfo",
    "CommentMode",
    "CommentResult",
    "CommitAuthor",
    "CommitOutcome",
    "Committed",
    "Event",
    "FailOn",
    "FileChange",
    "GitHubApiError",
    "GitHubAuthError",
    "GitHubClient",
    "GitHubContext",
    "GitHubNotFoundError",
    "GitHubPermissionError",
    "GitHubRateLimitError",
    "HeadMoved",
    "Mode",
    "NothingToCommit",
    "PullRequest",
    "PullRequestInfo",
    "RepositoryClient",
    "RetryPolicy",
    "Status",
    "Tier",
    "TokenIdentity",
    "Touched",
    "TouchedSkill",
    "annotate",
    "append_summary",
    "checkout_kind",
    "command",
    "comment_refusal",
    "committable_path",
    "declared_permissions",
    "escape_data",
    "escape_property",
    "fork_target_refusal",
    "format_output",
    "git_changed_paths",
    "git_env",
    "inactive_message",
    "input_value",
    "is_actions",
    "is_sticky",
    "load_context",
    "mask",
    "mask_secrets",
    "read_inputs",
    "read_only_scopes",
    "restore_workspace_owner",
    "touched_skills",
    "unsupported_fails",
    "unsupported_message",
    "write_outputs",
]
