"""The run directory, the one contract every reader of a run uses: the record (`Record`, one line of
results.jsonl), the run identity in run.json, durable appends and atomic writes, the lock, redaction."""

from cejudge_dspy.runs._dir import RESULTS, RUN, SUMMARY, read_identity, remove_tree
from cejudge_dspy.runs._files import RunWriteError, append_record, write_json_atomic
from cejudge_dspy.runs._identity import IDENTITY_KEYS, identity_changes, identity_diff
from cejudge_dspy.runs._json import strict_json
from cejudge_dspy.runs._lock import lock
from cejudge_dspy.runs._record import (
    RESUME_KEYS,
    Record,
    RunRecords,
    item_ids,
    member_records,
    pending_items,
    prepare_run_dir,
    read_records,
    read_run,
    read_timing,
    run_timing,
    write_summary,
)
from cejudge_dspy.runs._redact import public_url, public_urls, redact, redact_text, secrets_of
from cejudge_dspy.runs._writer import RecordWriter

__all__ = [
    "IDENTITY_KEYS",
    "RESULTS",
    "RESUME_KEYS",
    "RUN",
    "Record",
    "RecordWriter",
    "RunRecords",
    "RunWriteError",
    "SUMMARY",
    "append_record",
    "identity_changes",
    "identity_diff",
    "item_ids",
    "lock",
    "member_records",
    "pending_items",
    "prepare_run_dir",
    "read_identity",
    "read_records",
    "read_run",
    "read_timing",
    "public_url",
    "public_urls",
    "redact",
    "redact_text",
    "remove_tree",
    "run_timing",
    "secrets_of",
    "strict_json",
    "write_json_atomic",
    "write_summary",
]
