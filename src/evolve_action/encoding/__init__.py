"""Decode and encode evolve's file formats: json/jsonc/yaml in, Go-compatible JSON/YAML out.

Owns: decoding authored and results files into one JSON data model (size cap, UTF-8 check, pointer →
line lookups, one file per basename), Go-compatible deterministic encoders, yaml.v3 scalar
resolution, the Go standard-library behaviours the formats depend on (rounding half away from zero,
`TrimSpace`, `filepath.Clean`, byte truncation, float formatting) and atomic writes.
Guarantees: decode → encode of an evolve-written file is byte-identical; every decode problem is a
`SpecError` naming the file and line. Never does: schema validation, printing, reading `os.environ`.
The YAML parser (PyYAML's, LibYAML's where available) is imported on first YAML decode only
(start-up time).

Files (private; import from this package):
- `_document`: the decoded-document types shared by the decoders and encoders of this package.
- `_decode`: Reading authored and results files into one JSON data model, and finding them.
- `_encode`: Go-compatible, deterministic encoders: JSON (indented and compact) and yaml.v3-style YAML.
- `_fsio`: Link-safe atomic file writes (through the redaction gate) and sibling clean-up after a format switch.
- `_gocompat`: Go standard-library behaviours that evolve's file formats depend on, restated in Python.
- `_regex`: Go `regexp` (RE2) compilation through `google-re2`: the one place patterns are compiled.
- `_yaml`: YAML decoding with yaml.v3's semantics on PyYAML's event parser (LibYAML's where available).
- `_yamlscalar`: yaml.v3's resolution of plain YAML scalars, shared by the YAML decoder and encoder.
"""

from evolve_action.encoding._decode import (
    EXTENSIONS,
    MAX_FILE_BYTES,
    RESULTS_COMMENT,
    ROLLUP_COMMENT,
    decode_bytes,
    decode_bytes_with_lines,
    decode_path,
    decode_with_lines,
    find_one,
    find_results,
    format_of,
    may_hold_negative_zero,
    parse_format,
    read_capped,
    standardize_jsonc,
)
from evolve_action.encoding._document import MAX_DEPTH, Decoded, Format, LineOf, pointer_join
from evolve_action.encoding._encode import (
    encode_document,
    encode_json,
    encode_json_compact,
    encode_yaml,
    go_json_string,
    sorted_map,
)
from evolve_action.encoding._fsio import (
    UnsafeWriteError,
    atomic_write_text,
    ensure_dir,
    remove_siblings,
    write_text,
)
from evolve_action.encoding._gocompat import (
    go_clean,
    go_float,
    go_join,
    go_str_list,
    round1,
    round6,
    round_half_away,
    split_lines,
    strip_ansi,
    tail_bytes,
    trim_space,
    truncate_bytes,
)
from evolve_action.encoding._regex import Re2Error, compile_re2
from evolve_action.encoding._yaml import decode_yaml

__all__ = [
    "EXTENSIONS",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "RESULTS_COMMENT",
    "ROLLUP_COMMENT",
    "Decoded",
    "Format",
    "LineOf",
    "Re2Error",
    "UnsafeWriteError",
    "atomic_write_text",
    "compile_re2",
    "decode_bytes",
    "decode_bytes_with_lines",
    "decode_path",
    "decode_with_lines",
    "decode_yaml",
    "encode_document",
    "encode_json",
    "encode_json_compact",
    "encode_yaml",
    "ensure_dir",
    "find_one",
    "find_results",
    "format_of",
    "go_clean",
    "go_float",
    "go_join",
    "go_json_string",
    "go_str_list",
    "may_hold_negative_zero",
    "parse_format",
    "pointer_join",
    "read_capped",
    "remove_siblings",
    "round1",
    "round6",
    "round_half_away",
    "sorted_map",
    "split_lines",
    "standardize_jsonc",
    "strip_ansi",
    "tail_bytes",
    "trim_space",
    "truncate_bytes",
    "write_text",
]
