"""LLM endpoint configuration: a TOML file, environment variables and explicit values.

Precedence, highest first:

1. keyword arguments of :meth:`LLMConfig.load` (e.g. command-line flags), when not None;
2. environment variables (``GLNS_LLM_*``, see :data:`ENV_VARS`);
3. the TOML file (``path`` argument, else ``$GLNS_LLM_CONFIG``), keys at the top level or in
   an ``[llm]`` table;
4. the defaults of :class:`LLMConfig`.

The API key comes from ``GLNS_LLM_API_KEY``, else ``OPENAI_API_KEY``, else the file's
``api_key`` or the variable named by its ``api_key_env`` (keep keys out of files you share).
``base_url`` falls back to ``OPENAI_BASE_URL`` after ``GLNS_LLM_BASE_URL``.

The file may give a ``price`` (read by :class:`glns.llm.Ensemble`, ignored here); a file with a
``models`` list is an ensemble and must be read with :meth:`glns.llm.Ensemble.load`.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from glns.exceptions import GlnsError

__all__ = ["LLMConfig", "LLMConfigError", "ENV_VARS", "FILE_KEYS", "config_path", "read_table",
           "env_setting"]


class LLMConfigError(GlnsError, ValueError):
    """The LLM configuration is incomplete or invalid; the message says which setting."""


#: field -> environment variables, first set one wins
ENV_VARS: dict[str, tuple[str, ...]] = {
    "base_url": ("GLNS_LLM_BASE_URL", "OPENAI_BASE_URL"),
    "model": ("GLNS_LLM_MODEL",),
    "api_key": ("GLNS_LLM_API_KEY", "OPENAI_API_KEY"),
    "temperature": ("GLNS_LLM_TEMPERATURE",),
    "timeout": ("GLNS_LLM_TIMEOUT",),
    "max_retries": ("GLNS_LLM_MAX_RETRIES",),
    "backoff_base": ("GLNS_LLM_BACKOFF_BASE",),
    "backoff_max": ("GLNS_LLM_BACKOFF_MAX",),
    "max_tokens": ("GLNS_LLM_MAX_TOKENS",),
}
CONFIG_ENV = "GLNS_LLM_CONFIG"


@dataclass(frozen=True)
class LLMConfig:
    """Where and how to call an OpenAI-compatible chat-completions endpoint.

    base_url: e.g. ``https://api.deepseek.com/v1`` (the paper's model) or a local server.
    model: the model name sent with every request.
    api_key: secret; not shown by ``repr`` nor by :meth:`to_dict`. None for servers without
        authentication.
    temperature: sampling temperature in [0, 2].
    timeout: seconds per HTTP attempt.
    max_retries: extra attempts after a retryable failure (transport error, timeout, 429, 5xx).
    backoff_base, backoff_max: the n-th retry waits about ``min(backoff_max, backoff_base *
        2**(n-1))`` seconds (with jitter, see :class:`glns.llm.LLMClient`).
    max_tokens: completion token limit, None for the endpoint's default.
    """

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    temperature: float = 1.0
    timeout: float = 120.0
    max_retries: int = 5
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.base_url, str) or not self.base_url.strip():
            raise LLMConfigError(
                "LLM base URL not set: pass base_url (--base-url), set GLNS_LLM_BASE_URL, or "
                "put base_url = \"https://...\" in the config file")
        if not self.base_url.startswith(("http://", "https://")):
            raise LLMConfigError(f"LLM base_url must start with http:// or https://, got {self.base_url!r}")
        if not isinstance(self.model, str) or not self.model.strip():
            raise LLMConfigError(
                "LLM model not set: pass model (--model), set GLNS_LLM_MODEL, or put "
                "model = \"...\" in the config file")
        if self.api_key is not None and not isinstance(self.api_key, str):
            raise LLMConfigError("LLM api_key must be a string")
        _check(isinstance(self.temperature, (int, float)) and 0 <= self.temperature <= 2,
               f"LLM temperature must be in [0, 2], got {self.temperature!r}")
        _check(isinstance(self.timeout, (int, float)) and self.timeout > 0 and math.isfinite(self.timeout),
               f"LLM timeout must be > 0 seconds, got {self.timeout!r}")
        _check(isinstance(self.max_retries, int) and not isinstance(self.max_retries, bool)
               and self.max_retries >= 0,
               f"LLM max_retries must be an integer >= 0, got {self.max_retries!r}")
        _check(isinstance(self.backoff_base, (int, float)) and self.backoff_base > 0,
               f"LLM backoff_base must be > 0 seconds, got {self.backoff_base!r}")
        _check(isinstance(self.backoff_max, (int, float)) and self.backoff_max >= self.backoff_base,
               f"LLM backoff_max must be >= backoff_base ({self.backoff_base}), got {self.backoff_max!r}")
        _check(self.max_tokens is None or (isinstance(self.max_tokens, int) and self.max_tokens > 0),
               f"LLM max_tokens must be a positive integer or unset, got {self.max_tokens!r}")

    @classmethod
    def load(cls, path: str | os.PathLike | None = None, *,
             env: Mapping[str, str] | None = None, **overrides: Any) -> "LLMConfig":
        """Build a configuration from file, environment and overrides (see the module doc).

        path: TOML file; None means ``$GLNS_LLM_CONFIG`` if set, else no file.
        env: the environment to read (default ``os.environ``).
        overrides: field values that win over everything; None values are ignored.
        """
        env = os.environ if env is None else env
        unknown = set(overrides) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise LLMConfigError(f"unknown LLM setting(s): {', '.join(sorted(unknown))}")
        values: dict[str, Any] = {}
        file = config_path(path, env)
        if file is not None:
            values.update(cls._read_file(file, env))
        for name in ENV_VARS:
            found = env_setting(env, name)
            if found is not None:
                values[name] = found[0]
        values.update({k: v for k, v in overrides.items() if v is not None})
        for name in ("base_url", "model"):
            values.setdefault(name, "")
        return cls(**values)

    @classmethod
    def _read_file(cls, path: Path, env: Mapping[str, str]) -> dict[str, Any]:
        data = read_table(path)
        if "models" in data:
            n = len(data["models"]) if isinstance(data["models"], list) else "several"
            raise LLMConfigError(
                f"{path} defines an ensemble of {n} models (models = [...]); load it with "
                "glns.llm.Ensemble.load, which reads one model or several")
        data.pop("price", None)  # the ensemble loader reads it; a single endpoint needs none
        allowed = FILE_KEYS | {"price"}
        unknown = set(data) - allowed
        if unknown:
            raise LLMConfigError(
                f"unknown key(s) in {path}: {', '.join(sorted(unknown))} "
                f"(allowed: {', '.join(sorted(allowed))})")
        key_env = data.pop("api_key_env", None)
        if key_env is not None:
            if not isinstance(key_env, str):
                raise LLMConfigError(f"api_key_env in {path} must be a variable name")
            if "api_key" not in data and env.get(key_env):
                data["api_key"] = env[key_env]
        return data

    def with_overrides(self, **changes: Any) -> "LLMConfig":
        """A copy with some fields replaced (validated again)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    def to_dict(self) -> dict[str, Any]:
        """All settings for logs; the API key is replaced by whether one is set."""
        out = dataclasses.asdict(self)
        out["api_key"] = "<set>" if self.api_key else None
        return out


#: the keys of a single-model config file (besides ``price``)
FILE_KEYS: frozenset[str] = frozenset({f.name for f in dataclasses.fields(LLMConfig)} | {"api_key_env"})


def config_path(path: str | os.PathLike | None, env: Mapping[str, str]) -> Path | None:
    """The config file to read: `path`, else ``$GLNS_LLM_CONFIG`` if set, else None."""
    if path is None and env.get(CONFIG_ENV):
        path = env[CONFIG_ENV]
    return None if path is None else Path(path)


def read_table(path: Path) -> dict[str, Any]:
    """The settings table of a TOML config file: its ``[llm]`` table if it has one, else the
    top level (raw values, not validated)."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise LLMConfigError(f"LLM config file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise LLMConfigError(f"LLM config file {path} is not valid TOML: {exc}") from None
    return data["llm"] if isinstance(data.get("llm"), dict) else data


def env_setting(env: Mapping[str, str], name: str) -> tuple[Any, str] | None:
    """(value, variable) of the first non-empty variable of :data:`ENV_VARS` for field
    `name`, converted to the field's type; None if none is set."""
    for var in ENV_VARS[name]:
        raw = env.get(var)
        if raw is not None and raw.strip() != "":
            return _convert(name, raw, var), var
    return None


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise LLMConfigError(message)


def _convert(name: str, raw: str, var: str) -> Any:
    kind = {f.name: f.type for f in dataclasses.fields(LLMConfig)}[name]
    try:
        if name in ("max_retries", "max_tokens"):
            return int(raw)
        if "float" in str(kind):
            return float(raw)
    except ValueError:
        raise LLMConfigError(f"{var}={raw!r} is not a number") from None
    return raw.strip()
