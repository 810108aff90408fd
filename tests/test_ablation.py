"""GLNS_ABLATE: parts of the solver turned off for a benchmark, in this process and in every
process started after it."""

import os
import subprocess
import sys

import pytest

from glns import ablation


def test_no_variable_turns_nothing_off(monkeypatch):
    monkeypatch.delenv(ablation.ENV, raising=False)
    assert ablation.ablated_parts() == ()
    assert not ablation.ablated("swap_star")


def test_names_are_read_and_checked(monkeypatch):
    monkeypatch.setenv(ablation.ENV, " swap_star, ")
    assert ablation.ablated_parts() == ("swap_star",)
    assert ablation.ablated("swap_star")
    monkeypatch.setenv(ablation.ENV, "swap_star,swapstar")
    with pytest.raises(ValueError, match="unknown part.*swapstar.*known: swap_star"):
        ablation.ablated_parts()
    with pytest.raises(KeyError):
        ablation.ablated("nothing")


def test_a_new_process_starts_with_swap_star_off():
    """The native search reads the variable when it is imported (as a benchmark's worker
    processes do): SWAP* is off there, and on again by default."""
    code = "from glns._core import _local_search as l; print(l.set_swap_star(True))"
    env = {**os.environ, ablation.ENV: "swap_star"}
    off = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    env.pop(ablation.ENV)
    on = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert (off.stdout.strip(), on.stdout.strip()) == ("False", "True")


def test_ablating_load_penalty_turns_every_share_off(monkeypatch):
    from glns.params import SolveParams

    monkeypatch.delenv(ablation.ENV, raising=False)
    assert SolveParams(load_penalty=0.4).load_penalty_share(20.0, 500) == 0.4
    assert SolveParams().load_penalty_share(5.0, 500) == 0.3
    monkeypatch.setenv(ablation.ENV, "load_penalty")
    assert SolveParams(load_penalty=0.4).load_penalty_share(20.0, 500) == 0.0
    assert SolveParams().load_penalty_share(5.0, 500) == 0.0
