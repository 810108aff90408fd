"""A seccomp-bpf allowlist for processes that run untrusted operator code (Linux, x86-64).

A process that only computes needs memory, time, threads, reading files it already may read,
and its pipe to the parent. :func:`install` lets exactly that through and answers every other
system call with ``EPERM``: no ``execve``, no new processes (``clone`` only with
``CLONE_THREAD``), no sockets, no ``ptrace``, no file creation, writes, renames or deletions
(``open``/``openat`` only without write, create, truncate or append flags), no signals to
other processes, no raising of resource limits. Writes to file descriptors that are already
open (the pipe to the parent, ``/dev/null``) still work.

The filter is a small BPF program assembled here (:func:`program`), so no library is needed;
``tests/test_confinement.py`` checks each rule in a child process. Other architectures get
``supported() == False`` and the caller's weaker mode (:mod:`glns.executors.confinement`).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform

__all__ = ["supported", "install", "program", "ALLOWED", "WRITE_FLAGS"]

# --------------------------------------------------------------------------- kernel constants
_PR_SET_NO_NEW_PRIVS = 38
_PR_GET_SECCOMP = 21
_SYS_SECCOMP_X86_64 = 317
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1
_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_SYSCALL_BIT = 0x40000000

_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_RET_ALLOW = 0x7FFF0000

# BPF opcodes: load word at absolute offset, jumps on the accumulator against a constant
_LD_ABS = 0x20
_JEQ = 0x15
_JGE = 0x35
_JSET = 0x45
_RET = 0x06

# offsets in struct seccomp_data
_NR = 0
_ARCH = 4


def _arg_lo(i: int) -> int:
    return 16 + 8 * i          # little-endian: the low 32 bits of args[i]


def _arg_hi(i: int) -> int:
    return 20 + 8 * i


#: open flags that may create, change or grow a file (O_WRONLY, O_RDWR, O_CREAT, O_TRUNC,
#: O_APPEND and O_TMPFILE's own bit)
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND | 0o20000000
_CLONE_THREAD = 0x00010000
_IOCTLS = (0x5401, 0x5450, 0x5451)   # TCGETS (isatty), FIONCLEX, FIOCLEX (set_inheritable)
_PRCTLS = (15, 16)                    # PR_SET_NAME, PR_GET_NAME

#: x86-64 system calls allowed whatever their arguments: memory, time, threads' futexes,
#: signals to oneself, reading and polling open descriptors, metadata of paths
ALLOWED: dict[str, int] = {
    "read": 0, "write": 1, "close": 3, "stat": 4, "fstat": 5, "lstat": 6, "poll": 7, "lseek": 8,
    "mmap": 9, "mprotect": 10, "munmap": 11, "brk": 12, "rt_sigaction": 13,
    "rt_sigprocmask": 14, "rt_sigreturn": 15, "pread64": 17, "readv": 19, "writev": 20,
    "access": 21, "select": 23, "sched_yield": 24, "mremap": 25, "madvise": 28, "dup": 32,
    "dup2": 33, "nanosleep": 35, "getitimer": 36, "alarm": 37, "setitimer": 38, "getpid": 39,
    "exit": 60, "uname": 63, "fcntl": 72, "getdents": 78, "getcwd": 79, "readlink": 89,
    "gettimeofday": 96, "getrlimit": 97, "getrusage": 98, "sysinfo": 99, "times": 100,
    "getuid": 102, "getgid": 104, "geteuid": 107, "getegid": 108, "getppid": 110,
    "getpgrp": 111, "getgroups": 115, "getpgid": 121, "getsid": 124, "rt_sigpending": 127,
    "rt_sigtimedwait": 128, "rt_sigsuspend": 130, "sigaltstack": 131, "sched_getparam": 143,
    "sched_getscheduler": 145, "sched_get_priority_max": 146, "sched_get_priority_min": 147,
    "arch_prctl": 158, "gettid": 186, "time": 201, "futex": 202, "sched_getaffinity": 204,
    "getdents64": 217, "set_tid_address": 218, "restart_syscall": 219, "timer_create": 222,
    "timer_settime": 223, "timer_gettime": 224, "timer_getoverrun": 225, "timer_delete": 226,
    "clock_gettime": 228, "clock_getres": 229, "clock_nanosleep": 230, "exit_group": 231,
    "epoll_wait": 232, "epoll_ctl": 233, "newfstatat": 262, "readlinkat": 267,
    "faccessat": 269, "pselect6": 270, "ppoll": 271, "set_robust_list": 273,
    "get_robust_list": 274, "epoll_pwait": 281, "epoll_create1": 291, "dup3": 292,
    "preadv": 295, "getcpu": 309, "getrandom": 318, "membarrier": 324, "preadv2": 327,
    "statx": 332, "rseq": 334, "close_range": 436, "faccessat2": 439, "epoll_pwait2": 441,
    "futex_waitv": 449,
}

# system calls allowed only with certain arguments
_OPEN, _OPENAT, _CLONE, _CLONE3 = 2, 257, 56, 435
_KILL, _TGKILL, _RT_SIGQUEUEINFO, _RT_TGSIGQUEUEINFO = 62, 234, 129, 297
_PRLIMIT64, _IOCTL, _PRCTL = 302, 16, 157


def supported() -> str | None:
    """None if a filter can be installed here, else why not."""
    if not hasattr(os, "sched_getaffinity") or platform.system() != "Linux":
        return "seccomp is a Linux feature"
    if platform.machine() not in ("x86_64", "AMD64"):
        return f"no system-call table for {platform.machine()} (x86-64 only)"
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_GET_SECCOMP, 0, 0, 0, 0) < 0:
        return f"the kernel has no seccomp ({os.strerror(ctypes.get_errno())})"
    if not os.path.exists("/proc/sys/kernel/seccomp/actions_avail"):
        return "the kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)"
    return None


class _Assembler:
    """BPF with symbolic jump targets; jumps go forward only, at most 255 instructions."""

    def __init__(self) -> None:
        self.code: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def load(self, offset: int) -> None:
        self.code.append((_LD_ABS, 0, 0, offset))

    def jump(self, op: int, k: int, true: str | int = 0, false: str | int = 0) -> None:
        self.code.append((op, true, false, k & 0xFFFFFFFF))

    def ret(self, value: int) -> None:
        self.code.append((_RET, 0, 0, value))

    def assemble(self) -> list[tuple[int, int, int, int]]:
        out = []
        for pc, (op, jt, jf, k) in enumerate(self.code):
            def offset(target: object) -> int:
                if isinstance(target, int):
                    return target
                rel = self.labels[str(target)] - pc - 1
                if not 0 <= rel <= 255:
                    raise ValueError(f"BPF jump out of range to {target}")
                return rel
            out.append((op, offset(jt), offset(jf), k))
        return out


def _deny(err: int = errno.EPERM) -> int:
    return _RET_ERRNO | err


def program(pid: int) -> list[tuple[int, int, int, int]]:
    """The filter for process `pid` as (code, jt, jf, k) instructions."""
    a = _Assembler()
    a.load(_ARCH)
    a.jump(_JEQ, _AUDIT_ARCH_X86_64, 1, 0)
    a.ret(_RET_KILL_PROCESS)                       # another ABI: never expected, never allowed
    a.load(_NR)
    a.jump(_JGE, _X32_SYSCALL_BIT, 0, 1)           # the x32 ABI's numbers: refused
    a.ret(_deny())
    for nr in sorted(ALLOWED.values()):
        a.jump(_JEQ, nr, "allow")
    for nr, block in ((_OPEN, "open"), (_OPENAT, "openat"), (_CLONE, "clone"), (_CLONE3, "enosys"),
                      (_KILL, "self0"), (_TGKILL, "self0"), (_RT_SIGQUEUEINFO, "self0"),
                      (_RT_TGSIGQUEUEINFO, "self0"), (_PRLIMIT64, "prlimit"), (_IOCTL, "ioctl"),
                      (_PRCTL, "prctl")):
        a.jump(_JEQ, nr, block)
    a.label("deny")
    a.ret(_deny())
    a.label("allow")
    a.ret(_RET_ALLOW)
    a.label("enosys")                              # clone3: glibc falls back to clone
    a.ret(_deny(errno.ENOSYS))
    for block, arg in (("open", 1), ("openat", 2)):
        a.label(block)
        a.load(_arg_lo(arg))
        a.jump(_JSET, WRITE_FLAGS, "deny_end", "allow_end")
    a.label("clone")
    a.load(_arg_lo(0))
    a.jump(_JSET, _CLONE_THREAD, "allow_end", "deny_end")
    a.label("self0")                               # the first argument is this process
    a.load(_arg_hi(0))
    a.jump(_JEQ, 0, 0, "deny_end")
    a.load(_arg_lo(0))
    a.jump(_JEQ, pid, "allow_end", "deny_end")
    a.label("prlimit")                             # reading a limit (new limit NULL) only
    a.load(_arg_lo(2))
    a.jump(_JEQ, 0, 0, "deny_end")
    a.load(_arg_hi(2))
    a.jump(_JEQ, 0, "allow_end", "deny_end")
    for block, arg, values in (("ioctl", 1, _IOCTLS), ("prctl", 0, _PRCTLS)):
        a.label(block)
        a.load(_arg_lo(arg))
        for v in values:
            a.jump(_JEQ, v, "allow_end")
        a.ret(_deny())
    # jumps go forward only: the argument checks above end here
    a.label("deny_end")
    a.ret(_deny())
    a.label("allow_end")
    a.ret(_RET_ALLOW)
    return a.assemble()


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def install() -> None:
    """Install the filter on this process and all its threads; OSError if the kernel refuses.

    Irreversible: from here on the process may only compute.
    """
    why = supported()
    if why is not None:
        raise OSError(errno.ENOSYS, why)
    code = program(os.getpid())
    filters = (_SockFilter * len(code))(*[_SockFilter(*ins) for ins in code])
    prog = _SockFprog(len(code), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")
    if libc.syscall(_SYS_SECCOMP_X86_64, _SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC,
                    ctypes.byref(prog)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp(SECCOMP_SET_MODE_FILTER): {os.strerror(err)}")

