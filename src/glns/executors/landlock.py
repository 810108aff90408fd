"""Landlock: limit what a process may open to a few directories, read-only (Linux 5.13+).

:func:`restrict` lets the calling process (and everything it would start) read files and list
directories below the given paths and nothing else: no writes anywhere, no reads elsewhere
(``/etc``, ``/proc/self/environ``, the user's home). With ABI 4 and later it also refuses every
TCP bind and connect, and with ABI 6 signals to processes outside the domain and abstract
Unix sockets. Paths and metadata (``stat``) stay visible; Landlock guards opening.

A ctypes layer over the three system calls, which have the same numbers on every architecture.
"""

from __future__ import annotations

import ctypes
import errno
import os
from typing import Iterable

__all__ = ["abi_version", "restrict", "read_rights"]

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# filesystem rights
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_ABI1 = (1 << 13) - 1                 # EXECUTE .. MAKE_SYM
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
# network rights (ABI 4) and scopes (ABI 6)
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version (0: none, or disabled at boot)."""
    if not hasattr(os, "O_PATH"):
        return 0
    v = _libc().syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    return max(int(v), 0)


def _handled_fs(abi: int) -> int:
    rights = _FS_ABI1
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def read_rights(is_dir: bool) -> int:
    """The rights a read-only rule grants on a directory (read files, list) or a file."""
    return _READ_FILE | _READ_DIR if is_dir else _READ_FILE


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def restrict(read_paths: Iterable[str]) -> dict[str, object]:
    """Restrict this process to reading below `read_paths`; irreversible.

    Paths that do not exist are skipped. Returns what is now in force: the ABI, the paths
    granted, and whether TCP and foreign signals are blocked too. OSError if the kernel has no
    Landlock or refuses.
    """
    abi = abi_version()
    if abi < 1:
        raise OSError(errno.ENOSYS, "the kernel has no Landlock (or it is disabled)")
    libc = _libc()
    attr = _RulesetAttr(_handled_fs(abi), _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0,
                        _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = _check(libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0),
                     "landlock_create_ruleset")
    granted = []
    try:
        for path in dict.fromkeys(os.path.realpath(p) for p in read_paths):
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rule = _PathBeneathAttr(read_rights(os.path.isdir(path)), fd)
                _check(libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0),
                       f"landlock_add_rule({path})")
                granted.append(path)
            finally:
                os.close(fd)
        _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        _check(libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return {"abi": abi, "read_paths": tuple(granted), "network": abi >= 4, "signals": abi >= 6}
