"""The on-disk cache of compiled operators.

Layout: ``<cache_dir>/<key[:2]>/<key>/`` holds the module (``glns_op_<key[:20]>`` + the
interpreter's extension suffix) and ``meta.json`` (key, sha256 and size of the module,
versions, compile time, date). An entry appears whole or not at all: it is assembled in a
temporary directory inside the cache and moved into place with ``os.replace``. Builders of one
key serialise on ``<key[:2]>/<key>.lock`` (``fcntl.flock``), so a second process waits for
the first instead of compiling again. Lookups verify the module's size and hash; an entry
that fails is removed and rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Iterator

import numpy as np

from glns.compiler import toolchain as _toolchain
from glns.compiler.transform import READS_HEADER, RUNTIME_PXD

__all__ = ["cache_dir", "cache_key", "clear_cache", "module_name", "so_name", "entry_dir",
           "lookup", "discard", "key_lock", "work_dir"]

META = "meta.json"
_TMP_PREFIX = ".tmp-"


def cache_dir() -> Path:
    """Where compiled operators are kept: ``$GLNS_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/glns/operators``, else ``~/.cache/glns/operators``."""
    explicit = os.environ.get("GLNS_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "glns" / "operators"


def _root(cache_dir_: str | os.PathLike | None) -> Path:
    return Path(cache_dir_) if cache_dir_ is not None else cache_dir()


def key_material(source: str, *, signal_checks: bool = True) -> dict[str, object]:
    """Everything the compiled module depends on besides the code of this package."""
    return {
        "scheme": _toolchain.SCHEME,
        "source": source,
        "signal_checks": bool(signal_checks),
        "cython": _toolchain.cython_version(),
        "numpy": np.__version__,   # its C API is compiled in (element reads)
        "runtime": hashlib.sha256((RUNTIME_PXD + READS_HEADER).encode("utf-8")).hexdigest(),
        "directives": _toolchain.DIRECTIVES,
        "cython_options": _toolchain.CYTHON_OPTIONS,
        "cache_tag": sys.implementation.cache_tag,
        "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"),
        "platform": [sysconfig.get_platform(), platform.machine()],
        "toolchain": _toolchain.toolchain().as_dict(),
    }


def cache_key(source: str, *, signal_checks: bool = True) -> str:
    """The cache key (sha256 hex) of `source` compiled here: over the scheme version, the
    exact source, the signal-check flag, Cython's version and settings, the Python ABI
    (``cache_tag``, ``EXT_SUFFIX``), NumPy's version, the C helpers, the platform and the compiler command and flags."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a str, got {type(source).__name__}")
    material = key_material(source, signal_checks=signal_checks)
    blob = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(blob.encode("ascii")).hexdigest()


def module_name(key: str) -> str:
    """The extension module's name (its ``PyInit_`` symbol) for `key`."""
    return f"glns_op_{key[:20]}"


def so_name(key: str) -> str:
    """The module file's name for `key`."""
    return module_name(key) + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")


def entry_dir(root: Path, key: str) -> Path:
    return root / key[:2] / key


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified(entry: Path, key: str) -> Path | None:
    try:
        meta = json.loads((entry / META).read_text(encoding="utf-8"))
        so = entry / so_name(key)
        if not isinstance(meta, dict) or meta.get("key") != key or meta.get("so") != so.name:
            return None
        if so.stat().st_size != meta.get("size") or _sha256(so) != meta.get("sha256"):
            return None
    except (OSError, ValueError):
        return None
    return so


def lookup(root: Path, key: str) -> Path | None:
    """The module file of the entry for `key` if it is valid (meta.json readable, module size
    and sha256 as recorded), else None."""
    entry = entry_dir(root, key)
    return _verified(entry, key) if entry.exists() else None


def discard(root: Path, key: str) -> bool:
    """Remove the entry for `key` (call with the key's lock held); whether there was one."""
    entry = entry_dir(root, key)
    if not entry.exists():
        return False
    shutil.rmtree(entry, ignore_errors=True)
    return True


def work_dir(root: Path) -> Path:
    """A fresh temporary directory inside the cache (same file system: ``os.replace`` works)."""
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=_TMP_PREFIX, dir=root))


@contextlib.contextmanager
def key_lock(root: Path, key: str, timeout: float) -> Iterator[int | None]:
    """Hold the build lock of `key`: yields the locked file descriptor, or None if the lock
    was not free within `timeout`. A build process that inherits the descriptor keeps the
    lock held until it exits, even if this process dies first.

    Without ``fcntl`` (Windows) there is no lock and this yields -1 at once.
    """
    try:
        import fcntl
    except ImportError:
        yield -1
        return
    path = root / key[:2] / f"{key}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield None
                    return
                time.sleep(0.05)
        try:
            yield fd
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def clear_cache(cache_dir: str | os.PathLike | None = None) -> int:
    """Remove every compiled operator from the cache (default :func:`cache_dir`); returns
    the number of entries removed. Lock files and leftover temporary directories go too."""
    root = _root(cache_dir)
    if not root.is_dir():
        return 0
    removed = 0
    for shard in root.iterdir():
        if shard.name.startswith(_TMP_PREFIX):
            shutil.rmtree(shard, ignore_errors=True)
            continue
        if not shard.is_dir() or len(shard.name) != 2:
            continue
        for item in shard.iterdir():
            if item.is_dir():
                shutil.rmtree(item, ignore_errors=True)
                removed += 1
            elif item.suffix == ".lock":
                with contextlib.suppress(OSError):
                    item.unlink()
        with contextlib.suppress(OSError):
            shard.rmdir()
    return removed
