"""Model ensembles: several LLM endpoints with sampling weights and per-model prices.

One TOML file describes one model (the form :meth:`LLMConfig.load` reads, plus an optional
``price = {input = 0.27, output = 1.10}`` in USD per million tokens) or an ensemble: an array of
tables ``models`` (``[[llm.models]]``) whose top-level keys are defaults shared by every model.
A model table may set any :class:`LLMConfig` field, ``api_key_env``, ``weight`` (> 0, default
1), ``price`` and ``name`` (default: the model name, made unique with ``#2``, ``#3``...).

Precedence in an ensemble, per model, highest first:

1. keyword overrides of :meth:`Ensemble.load` (command-line flags) other than ``model``,
   ``base_url`` and ``api_key``, which are errors (an ensemble names its models in the file);
2. the tuning variables ``GLNS_LLM_TEMPERATURE``, ``_TIMEOUT``, ``_MAX_RETRIES``,
   ``_BACKOFF_BASE``, ``_BACKOFF_MAX``, ``_MAX_TOKENS``;
3. the model's table; 4. the file's top-level keys; 5. ``GLNS_LLM_BASE_URL`` /
   ``OPENAI_BASE_URL`` / ``GLNS_LLM_MODEL``, only for a model the file gives none;
6. the :class:`LLMConfig` defaults.

So ``--temperature 0.5`` sets every model's temperature, as it does for one model. API keys: a
key named in the file (``api_key`` or ``api_key_env``, the model's table before the top level)
wins; ``GLNS_LLM_API_KEY`` / ``OPENAI_API_KEY`` are only the fallback for models whose file
entries name no key, so that a key meant for one provider is never sent to another. A model
whose ``api_key_env`` variable is unset has no key (like :meth:`LLMConfig.load`).
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from glns.llm.config import (
    ENV_VARS, FILE_KEYS, LLMConfig, LLMConfigError, config_path, env_setting, read_table,
)

__all__ = ["Price", "ModelEntry", "Ensemble", "MODEL_KEYS", "CURRENCY"]

#: the keys a ``[[llm.models]]`` table may hold
MODEL_KEYS: frozenset[str] = FILE_KEYS | {"weight", "price", "name"}
CURRENCY = "USD per 1M tokens"

# settings that say which endpoint a model is and who pays: the file decides them in an
# ensemble, so overriding them for all models at once is an error (setting -> flag)
_PER_MODEL = {"model": "--model", "base_url": "--base-url", "api_key": "api_key"}
# the environment settings that apply to every model of an ensemble
_TUNING_ENV = tuple(name for name in ENV_VARS if name not in _PER_MODEL)


def _real(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class Price:
    """USD per million tokens: `input` for prompt tokens, `output` for completion tokens."""

    input: float
    output: float

    def __post_init__(self) -> None:
        for side in ("input", "output"):
            value = getattr(self, side)
            if not _real(value) or value < 0:
                raise LLMConfigError(
                    f"price {side} must be a finite number >= 0 ({CURRENCY}), got {value!r}")
            object.__setattr__(self, side, float(value))

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """USD for one call with these token counts."""
        counts = []
        for label, n in (("prompt_tokens", prompt_tokens), ("completion_tokens", completion_tokens)):
            try:
                n = operator.index(n)
            except TypeError:
                raise TypeError(f"{label} must be an integer, got {n!r}") from None
            if n < 0:
                raise ValueError(f"{label} must be >= 0, got {n}")
            counts.append(n)
        return (counts[0] * self.input + counts[1] * self.output) / 1e6


@dataclass(frozen=True)
class ModelEntry:
    """One model of an ensemble.

    name: unique label for logs and summaries; config: endpoint and call settings;
    weight: sampling weight (> 0, finite); price: None when unknown.
    """

    name: str
    config: LLMConfig
    weight: float = 1.0
    price: Price | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise LLMConfigError(f"model name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.config, LLMConfig):
            raise LLMConfigError(f"model {self.name!r}: config must be an LLMConfig")
        if not _real(self.weight) or self.weight <= 0:
            raise LLMConfigError(
                f"model {self.name!r}: weight must be a finite number > 0, got {self.weight!r}")
        if self.price is not None and not isinstance(self.price, Price):
            raise LLMConfigError(f"model {self.name!r}: price must be a Price or None")
        object.__setattr__(self, "weight", float(self.weight))


@dataclass(frozen=True)
class Ensemble:
    """Models to draw from, each call independently by weight (see :meth:`choose`)."""

    entries: tuple[ModelEntry, ...]
    _cumulative: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        entries = tuple(self.entries)
        if not entries:
            raise LLMConfigError("an ensemble needs at least one model")
        if not all(isinstance(e, ModelEntry) for e in entries):
            raise LLMConfigError("ensemble entries must be ModelEntry objects")
        names = [e.name for e in entries]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise LLMConfigError(f"model names must be unique in an ensemble; repeated: {', '.join(repeated)}")
        object.__setattr__(self, "entries", entries)
        object.__setattr__(self, "_cumulative", tuple(itertools.accumulate(e.weight for e in entries)))

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike | None = None, *,
             env: Mapping[str, str] | None = None, **overrides: Any) -> "Ensemble":
        """Read one model or an ensemble (see the module doc for the format and precedence).

        path: TOML file; None means ``$GLNS_LLM_CONFIG`` if set, else no file (then the
            environment and `overrides` describe one model, as for :meth:`LLMConfig.load`).
        env: the environment to read (default ``os.environ``).
        overrides: LLMConfig field values (e.g. command-line flags); None values are ignored.
        Raises LLMConfigError naming the file, the model and the setting.
        """
        env = os.environ if env is None else env
        file = config_path(path, env)
        table = read_table(file) if file is not None else {}
        if "models" not in table:
            config = LLMConfig.load(file, env=env, **overrides)
            price = _parse_price(table.get("price"), f"price in {file}")
            return cls.single(config, price)
        return cls._load_models(file, table, env, overrides)

    @classmethod
    def single(cls, config: LLMConfig, price: Price | None = None) -> "Ensemble":
        """An ensemble of one model, named after it."""
        return cls((ModelEntry(config.model, config, 1.0, price),))

    @classmethod
    def _load_models(cls, file: Path, table: dict[str, Any], env: Mapping[str, str],
                     overrides: dict[str, Any]) -> "Ensemble":
        models = table.pop("models")
        if not isinstance(models, list) or not all(isinstance(m, dict) for m in models):
            raise LLMConfigError(f"models in {file} must be an array of tables ([[llm.models]])")
        if not models:
            raise LLMConfigError(f"models in {file} is empty: add [[llm.models]] tables, or "
                                 "remove models and give one model at the top level")
        unknown = set(overrides) - (FILE_KEYS - {"api_key_env"})
        if unknown:
            raise LLMConfigError(f"unknown LLM setting(s): {', '.join(sorted(unknown))}")
        for key, flag in _PER_MODEL.items():
            if overrides.get(key) is not None:
                raise LLMConfigError(
                    f"{flag} cannot be combined with an ensemble of {len(models)} models in {file} "
                    f"(each model's {key} is in the file; drop {flag} or use another config file)")
        top_allowed = FILE_KEYS | {"price", "models"}
        unknown = set(table) - top_allowed
        if unknown:
            raise LLMConfigError(
                f"unknown key(s) at the top of {file}: {', '.join(sorted(unknown))} (allowed: "
                f"{', '.join(sorted(top_allowed))}; weight and name go in each [[llm.models]] table)")
        defaults = dict(table)
        default_price = _parse_price(defaults.pop("price", None), f"price at the top of {file}")
        default_key = _file_key(defaults, env, f"the top of {file}")

        # every env / flag tuning value applies to every model (flags > env, as for one model)
        tuning: dict[str, Any] = {}
        for name in _TUNING_ENV:
            found = env_setting(env, name)
            if found is not None:
                tuning[name] = found[0]
        tuning.update({k: v for k, v in overrides.items() if v is not None})
        fallback = {name: found[0] for name in ("base_url", "model", "api_key")
                    if (found := env_setting(env, name)) is not None}

        built: list[tuple[str | None, LLMConfig, float, Price | None]] = []
        for i, raw in enumerate(models, start=1):
            where = f"[[models]] #{i} in {file}"
            unknown = set(raw) - MODEL_KEYS
            if unknown:
                raise LLMConfigError(f"unknown key(s) in {where}: {', '.join(sorted(unknown))} "
                                     f"(allowed: {', '.join(sorted(MODEL_KEYS))})")
            own = dict(raw)
            name = own.pop("name", None)
            if name is not None and (not isinstance(name, str) or not name.strip()):
                raise LLMConfigError(f"name in {where} must be a non-empty string, got {name!r}")
            weight = own.pop("weight", 1.0)
            if not _real(weight) or weight <= 0:
                raise LLMConfigError(f"weight in {where} must be a finite number > 0, got {weight!r}")
            price = _parse_price(own.pop("price", None), f"price in {where}") if "price" in raw \
                else default_price
            key = _file_key(own, env, where)
            values = {**defaults, **own, **tuning}
            for setting in ("base_url", "model"):
                if setting not in values and setting in fallback:
                    values[setting] = fallback[setting]
                values.setdefault(setting, "")
            values["api_key"] = next((k for k in (key, default_key) if k is not _NO_KEY),
                                     fallback.get("api_key"))
            try:
                config = LLMConfig(**values)
            except LLMConfigError as exc:
                raise LLMConfigError(f"{where}: {exc}") from None
            built.append((name, config, float(weight), price))
        names = _unique_names([(name, config.model) for name, config, _, _ in built], file)
        return cls(tuple(ModelEntry(n, c, w, p) for n, (_, c, w, p) in zip(names, built)))

    # -- use ---------------------------------------------------------------------------------
    def choose(self, rng: random.Random) -> ModelEntry:
        """A model drawn by weight. With one model it is returned without drawing from `rng`;
        with several exactly one ``rng.random()`` is drawn, so the choice is a function of the
        rng state."""
        if len(self.entries) == 1:
            return self.entries[0]
        total = self._cumulative[-1]
        i = bisect.bisect_right(self._cumulative, rng.random() * total)
        return self.entries[min(i, len(self.entries) - 1)]  # u * total may round up to total

    def entry(self, name: str) -> ModelEntry:
        """The model called `name`; LLMConfigError listing the known names otherwise."""
        for e in self.entries:
            if e.name == name:
                return e
        raise LLMConfigError(f"no model named {name!r} in the ensemble; known: "
                             f"{', '.join(e.name for e in self.entries)}")

    def cost(self, name: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """USD for one call of model `name`, None when that model has no price."""
        price = self.entry(name).price
        return None if price is None else price.cost(prompt_tokens, completion_tokens)

    @property
    def priced(self) -> bool:
        """Whether every model has a price (a money budget needs it)."""
        return all(e.price is not None for e in self.entries)

    def prices(self) -> dict[str, dict[str, Any]]:
        """The price of every model (None values when unknown), JSON-ready and without keys."""
        return {e.name: {"model": e.config.model, "base_url": e.config.base_url,
                         "input": e.price.input if e.price else None,
                         "output": e.price.output if e.price else None,
                         "currency": CURRENCY}
                for e in self.entries}

    def to_dict(self) -> dict[str, Any]:
        """All settings for logs and run metadata; API keys appear only as "<set>" or None."""
        return {"models": [{"name": e.name, "weight": e.weight,
                            "price": None if e.price is None else
                            {"input": e.price.input, "output": e.price.output},
                            **e.config.to_dict()} for e in self.entries],
                "priced": self.priced}

    def __len__(self) -> int:
        return len(self.entries)


_NO_KEY = object()   # a file layer that names no key (None means "named, but not set")


def _file_key(layer: dict[str, Any], env: Mapping[str, str], where: str) -> Any:
    """Pop api_key / api_key_env from a file layer: the key, None if its variable is unset,
    or _NO_KEY if the layer names none."""
    key_env = layer.pop("api_key_env", None)
    if "api_key" in layer:
        return layer.pop("api_key")
    if key_env is None:
        return _NO_KEY
    if not isinstance(key_env, str) or not key_env:
        raise LLMConfigError(f"api_key_env in {where} must be a variable name, got {key_env!r}")
    return env.get(key_env) or None


def _parse_price(raw: Any, where: str) -> Price | None:
    if raw is None:
        return None
    example = "e.g. price = {input = 0.27, output = 1.10}"
    if not isinstance(raw, dict):
        raise LLMConfigError(f"{where} must be a table of input and output ({CURRENCY}), {example}")
    missing = {"input", "output"} - set(raw)
    extra = set(raw) - {"input", "output"}
    if missing or extra:
        problem = f"lacks {' and '.join(sorted(missing))}" if missing else \
            f"has unknown key(s) {', '.join(sorted(extra))}"
        raise LLMConfigError(f"{where} {problem}: give input and output ({CURRENCY}), {example}")
    try:
        return Price(raw["input"], raw["output"])
    except LLMConfigError as exc:
        raise LLMConfigError(f"{where}: {exc}") from None


def _unique_names(items: list[tuple[str | None, str]], file: Path) -> list[str]:
    """Explicit names as given (duplicates are an error); the others are the model name,
    suffixed #2, #3... when taken."""
    explicit = [name for name, _ in items if name is not None]
    repeated = sorted({n for n in explicit if explicit.count(n) > 1})
    if repeated:
        raise LLMConfigError(f"model name(s) given twice in {file}: {', '.join(repeated)}")
    taken = set(explicit)
    out = []
    for name, model in items:
        if name is None:
            name, k = model, 2
            while name in taken:
                name, k = f"{model}#{k}", k + 1
            taken.add(name)
        out.append(name)
    return out
