"""The instances of an evolution run: the training set of every episode and the validation set
the best pair is chosen on (generated from the configured seeds, or the paper's sets)."""

from __future__ import annotations

from glns import datasets
from glns.evolution.config import EvolutionConfig
from glns.problems import Problem

__all__ = ["training_instances", "validation_instances"]


def _instances(cfg: EvolutionConfig, split: str) -> list[Problem]:
    if cfg.instances == "paper":
        size = cfg.train_size if split == "train" else cfg.validation_size
        return datasets.paper_instances(cfg.problem, size, split)
    if split == "train":
        return [datasets.generate(cfg.problem, cfg.train_size, cfg.train_seed + i)
                for i in range(cfg.train_count)]
    return [datasets.generate(cfg.problem, cfg.validation_size, cfg.validation_seed + i)
            for i in range(cfg.validation_count)]


def training_instances(cfg: EvolutionConfig) -> list[Problem]:
    """The instances of every episode."""
    return _instances(cfg, "train")


def validation_instances(cfg: EvolutionConfig) -> list[Problem]:
    """The instances the best pair is chosen on."""
    return _instances(cfg, "validation")
