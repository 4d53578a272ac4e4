"""How a server audits: the ``kplane serve`` flags, with kube-apiserver's names and defaults."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

JSON = "json"
LEGACY = "legacy"
FORMATS = (JSON, LEGACY)
BLOCKING = "blocking"
BATCH = "batch"
MODES = (BLOCKING, BATCH)


@dataclass
class AuditOptions:
    policy_file: Path | None = None  # --audit-policy-file; None: nothing is audited, no filter installed
    log_path: str = ""  # --audit-log-path; "-" is standard output, "" no log
    log_format: str = JSON
    log_max_age: int = 366  # days a rotated file is kept (0: no limit)
    log_max_backups: int = 100  # rotated files kept (0: no limit)
    log_max_size: int = 100  # megabytes before the file is rotated (0: never)
    log_mode: str = BLOCKING
    log_buffer_size: int = 10000  # events waiting to be written; more are dropped, with a warning

    @property
    def enabled(self) -> bool:
        """Both a policy and somewhere to write: kube-apiserver records nothing otherwise."""
        return self.policy_file is not None and bool(self.log_path)


def _not_negative(flag: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid integer {text!r}") from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"{flag} {value} can't be a negative number")
        return value
    return parse


def _positive(text: str) -> int:
    value = _not_negative("--audit-log-batch-buffer-size")(text)
    if value == 0:
        raise argparse.ArgumentTypeError("--audit-log-batch-buffer-size must be a positive number")
    return value


def add_flags(parser: argparse.ArgumentParser) -> None:
    d = AuditOptions()
    parser.add_argument("--audit-policy-file", type=Path, default=None, metavar="FILE",
                        help="the audit.k8s.io/v1 Policy saying which requests are recorded, and how much of them")
    parser.add_argument("--audit-log-path", default="", metavar="PATH",
                        help="write audit events to this file (0600), '-' for standard output")
    parser.add_argument("--audit-log-format", choices=FORMATS, default=d.log_format,
                        help=f"json: one audit.k8s.io/v1 Event per line; legacy: one line of text (default {d.log_format})")
    parser.add_argument("--audit-log-maxage", type=_not_negative("--audit-log-maxage"), default=d.log_max_age,
                        metavar="DAYS", help=f"days to keep rotated files, 0 for no limit (default {d.log_max_age})")
    parser.add_argument("--audit-log-maxbackup", type=_not_negative("--audit-log-maxbackup"),
                        default=d.log_max_backups, metavar="N",
                        help=f"rotated files to keep, 0 for no limit (default {d.log_max_backups})")
    parser.add_argument("--audit-log-maxsize", type=_not_negative("--audit-log-maxsize"), default=d.log_max_size,
                        metavar="MB", help=f"megabytes before the file is rotated, 0 never (default {d.log_max_size})")
    parser.add_argument("--audit-log-mode", choices=MODES, default=d.log_mode,
                        help="blocking: a request goes on once its event is written; batch: it does not wait "
                             f"(default {d.log_mode})")
    parser.add_argument("--audit-log-batch-buffer-size", type=_positive, default=d.log_buffer_size, metavar="N",
                        help=f"events waiting to be written; past it they are dropped, with a warning "
                             f"(default {d.log_buffer_size})")


def from_args(args: argparse.Namespace) -> AuditOptions:
    return AuditOptions(policy_file=args.audit_policy_file, log_path=args.audit_log_path,
                        log_format=args.audit_log_format, log_max_age=args.audit_log_maxage,
                        log_max_backups=args.audit_log_maxbackup, log_max_size=args.audit_log_maxsize,
                        log_mode=args.audit_log_mode, log_buffer_size=args.audit_log_batch_buffer_size)
