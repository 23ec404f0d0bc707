"""Files the package reads and writes, the one mechanism for each: `read_json` / `read_toml` (regular
files only, bounded in size, nesting and numbers caught, one line naming the file) and `write_file_atomic`
and its siblings (no symlink followed, temporary files created exclusively, one line on a full or
read-only disk); `paused_gc` while a reader builds millions of objects without cycles."""

from cejudge_dspy.files._gc import paused_gc
from cejudge_dspy.files._read import (
    MAX_BYTES,
    MAX_RESULTS_BYTES,
    file_kind,
    loads,
    parse_json,
    read_bytes,
    read_json,
    read_text,
    read_toml,
)
from cejudge_dspy.files._write import (
    FileWriteError,
    UnsafeFileError,
    make_dirs,
    open_nofollow,
    refuse_symlink,
    touch_nofollow,
    write_failure,
    write_file_atomic,
)

__all__ = [
    "FileWriteError",
    "MAX_BYTES",
    "MAX_RESULTS_BYTES",
    "UnsafeFileError",
    "file_kind",
    "loads",
    "make_dirs",
    "open_nofollow",
    "parse_json",
    "paused_gc",
    "read_bytes",
    "read_json",
    "read_text",
    "read_toml",
    "refuse_symlink",
    "touch_nofollow",
    "write_failure",
    "write_file_atomic",
]
