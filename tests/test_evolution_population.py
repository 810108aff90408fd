"""Selection rules of the evolution step: ranking, pruning, parents, strategies, S pair choice,
score bookkeeping and the run configuration."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from glns.evolution import EvolutionConfig, Member
from glns.evolution.population import (
    Scores, choose_pair, homogeneous_parents, mutation_action, prune, rank, roulette, sample_strategy,
)
from glns.evolution.seeds import seed_members, seed_source
from glns.params import SIGMA_AGGRESSIVE, SIGMA_FLAT, FixedTemperature

DRAWS = 20000


def _members(kind: str, n: int) -> list[Member]:
    return [Member(id=f"{kind[0]}{i}", kind=kind, source=f"def {kind}(a, b, c):\n    return {i}\n",
                   function=kind, idea=None, action="i1" if kind == "destroy" else "i2")
            for i in range(n)]


def _freq(draw, n: int) -> np.ndarray:
    counts = Counter(draw() for _ in range(DRAWS))
    return np.array([counts[i] for i in range(n)]) / DRAWS


def test_rank_orders_by_fitness_and_keeps_older_first_on_ties():
    ms = _members("destroy", 4)
    f = {"d0": 1.0, "d1": 5.0, "d2": 1.0}   # d3 missing: 0
    assert [m.id for m in rank(ms, f)] == ["d1", "d0", "d2", "d3"]


def test_prune_drops_the_worst_m_and_keeps_population_order():
    ms = _members("repair", 5)
    f = {"r0": 3.0, "r1": 0.5, "r2": 9.0, "r3": 0.1, "r4": 2.0}
    kept, dropped = prune(ms, f, 2)
    assert [m.id for m in kept] == ["r0", "r2", "r4"]
    assert {m.id for m in dropped} == {"r1", "r3"}
    kept, dropped = prune(ms, f, 0)
    assert len(kept) == 5 and dropped == []


def test_prune_never_empties_a_population():
    ms = _members("destroy", 2)
    kept, dropped = prune(ms, {"d0": 1.0, "d1": 2.0}, 5)
    assert [m.id for m in kept] == ["d1"] and [m.id for m in dropped] == ["d0"]
    with pytest.raises(ValueError):
        prune(ms, {}, -1)


def test_roulette_is_fitness_proportionate():
    rng = random.Random(1)
    w = [1.0, 0.0, 3.0, 6.0]
    freq = _freq(lambda: roulette(w, rng), 4)
    assert freq[1] == 0.0
    assert np.allclose(freq, np.array(w) / 10, atol=0.015)


def test_roulette_with_zero_or_negative_weights():
    rng = random.Random(2)
    assert np.allclose(_freq(lambda: roulette([0.0, 0.0, 0.0], rng), 3), 1 / 3, atol=0.015)
    assert all(roulette([-5.0, 2.0], rng) == 1 for _ in range(200))
    with pytest.raises(ValueError):
        roulette([], rng)


def test_homogeneous_parents_are_distinct_and_drawn_by_fitness():
    ms = _members("destroy", 3)
    f = {"d0": 1.0, "d1": 1.0, "d2": 8.0}
    rng = random.Random(3)
    pairs = [homogeneous_parents(ms, f, rng) for _ in range(DRAWS)]
    assert all(a.id != b.id for a, b in pairs)
    first = Counter(a.id for a, _ in pairs)
    assert first["d2"] / DRAWS == pytest.approx(0.8, abs=0.015)
    # d2 chosen first -> the second is d0 or d1 half each
    second_after_d2 = Counter(b.id for a, b in pairs if a.id == "d2")
    assert second_after_d2["d0"] / first["d2"] == pytest.approx(0.5, abs=0.02)
    with pytest.raises(ValueError, match="at least two"):
        homogeneous_parents(ms[:1], f, rng)


def test_mutation_action_by_rank():
    rng = random.Random(4)
    assert all(mutation_action(0, 3, rng) == "m2" for _ in range(50))
    assert all(mutation_action(2, 3, rng) == "m1" for _ in range(50))
    middle = Counter(mutation_action(1, 3, rng) for _ in range(DRAWS))
    assert middle["m1"] / DRAWS == pytest.approx(0.5, abs=0.015)
    assert mutation_action(0, 1, rng) == "m2"
    with pytest.raises(ValueError):
        mutation_action(3, 3, rng)


def test_choose_pair_max_and_roulette():
    s = np.array([[1.0, 0.0], [0.0, 3.0], [4.0, 2.0]])
    rng = random.Random(5)
    assert choose_pair(s, rng, "max") == (2, 0)
    freq = _freq(lambda: (lambda ij: ij[0] * 2 + ij[1])(choose_pair(s, rng, "roulette")), 6)
    assert np.allclose(freq, s.ravel() / s.sum(), atol=0.015)
    zero = _freq(lambda: (lambda ij: ij[0] * 2 + ij[1])(choose_pair(np.zeros((2, 2)), rng)), 4)
    assert np.allclose(zero, 0.25, atol=0.015)
    with pytest.raises(ValueError, match="'max' or 'roulette'"):
        choose_pair(s, rng, "best")
    with pytest.raises(ValueError):
        choose_pair(np.zeros((0, 0)), rng)


def test_sample_strategy_follows_the_mix_and_the_allowed_set():
    rng = random.Random(6)
    mix = {"mutation": 0.5, "homogeneous": 0.4, "joint": 0.1}
    c = Counter(sample_strategy(mix, rng) for _ in range(DRAWS))
    assert c["mutation"] / DRAWS == pytest.approx(0.5, abs=0.015)
    assert c["homogeneous"] / DRAWS == pytest.approx(0.4, abs=0.015)
    assert c["joint"] / DRAWS == pytest.approx(0.1, abs=0.01)
    c = Counter(sample_strategy(mix, rng, ["mutation", "homogeneous"]) for _ in range(DRAWS))
    assert c["joint"] == 0 and c["mutation"] / DRAWS == pytest.approx(5 / 9, abs=0.015)
    with pytest.raises(ValueError, match="no refill strategy"):
        sample_strategy({"joint": 1.0}, rng, ["mutation"])


def test_scores_accumulate_and_reset():
    s = Scores()
    s.add_run(["d0", "d1"], ["r0"], [1.5, 0.1], [1.6], np.array([[1.5], [0.1]]))
    s.add_run(["d0", "d1"], ["r0"], [0.8, 1.2], [2.0], np.array([[0.8], [1.2]]))
    assert s.fitness == pytest.approx({"d0": 2.3, "d1": 1.3, "r0": 3.6})
    assert np.allclose(s.matrix(["d1", "d0", "d9"], ["r0"]), [[1.3], [2.3], [0.0]])
    assert Scores.from_dict(s.to_dict()) == s
    s.reset()
    assert s.fitness == {} and s.synergy == {}


def test_member_round_trip_and_validation():
    m = Member(id="d3", kind="destroy", source="def d(x, k, p):\n    return [], x\n", function="d",
               idea="nothing", action="c2", parents=("d1", "r0"), cycle=4)
    assert Member.from_dict(m.to_dict()) == m
    with pytest.raises(ValueError, match="kind"):
        Member(id="x", kind="mutate", source="", function="f", idea=None, action="seed")
    with pytest.raises(ValueError, match="action"):
        Member(id="x", kind="destroy", source="", function="f", idea=None, action="m3")


@pytest.mark.parametrize("problem", ["tsp", "cvrp", "ovrp"])
def test_seed_members_are_self_contained_and_run(problem):
    import glns
    from glns import datasets

    d, r = seed_members(problem)
    assert [m.id for m in d] == ["d0", "d1"] and [m.id for m in r] == ["r0"]
    assert all(m.action == "seed" and m.idea for m in d + r)
    assert "import random" in seed_source(problem, "random_removal")
    inst = {"tsp": datasets.generate_tsp, "cvrp": datasets.generate_cvrp,
            "ovrp": datasets.generate_ovrp}[problem](15, 3)
    res = glns.solve(inst, [m.operator() for m in d], [m.operator() for m in r], iterations=30,
                     seed=1, params=glns.SolveParams.paper())
    assert all(st.failures == 0 for st in res.destroy_stats + res.repair_stats)
    nat_d, nat_r = seed_members(problem, native=True)
    assert [m.operator().native_name for m in nat_d + nat_r] == ["random_removal", "worst_removal",
                                                               "greedy_insertion"]


def test_config_validation_and_ablations():
    cfg = EvolutionConfig()
    assert (cfg.population, cfg.prune, cfg.episodes_per_cycle, cfg.generations) == (5, 2, 10, 200)
    assert cfg.cycles == 20 and EvolutionConfig(generations=25).cycles == 3
    p = cfg.solve_params()
    assert p.temperature == FixedTemperature(100.0, 0.97) and p.destroy_fraction == 0.2
    assert p.scores == (1.5, 1.2, 0.8, 0.1) and p.adaptive
    assert EvolutionConfig(sigma="flat").solve_params().scores == SIGMA_FLAT
    assert EvolutionConfig(sigma="aggressive").solve_params().scores == SIGMA_AGGRESSIVE
    assert not EvolutionConfig(adaptive=False).solve_params().adaptive
    assert EvolutionConfig(no_joint=True).effective_mix() == {"mutation": 0.5, "homogeneous": 0.4, "joint": 0.0}
    assert EvolutionConfig(no_mutation=True, no_homogeneous=True).effective_mix()["joint"] == 0.1
    with pytest.raises(ValueError, match="keep at least one"):
        EvolutionConfig(no_mutation=True, no_homogeneous=True, no_joint=True)
    with pytest.raises(ValueError, match="prune"):
        EvolutionConfig(prune=5)
    with pytest.raises(ValueError, match="unknown strategies"):
        EvolutionConfig(mix={"crossover": 1.0})
    with pytest.raises(ValueError, match="problem"):
        EvolutionConfig(problem="vrp")
    with pytest.raises(ValueError, match="sigma"):
        EvolutionConfig(sigma="huge")
    assert EvolutionConfig.from_dict(EvolutionConfig(seed=3, no_joint=True).to_dict()) == \
        EvolutionConfig(seed=3, no_joint=True)
    with pytest.raises(ValueError, match="unknown evolution settings"):
        EvolutionConfig.from_dict({"colour": "red"})
