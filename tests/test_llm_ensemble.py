"""Model ensembles (glns.llm.ensemble): both file forms, precedence, validation, weighted
choice, prices and costs, no secrets in snapshots, and calls through the offline server."""

from __future__ import annotations

import json
import math
import random

import pytest

from glns.llm import Ensemble, LLMClient, LLMConfig, LLMConfigError, ModelEntry, Price, markers
from glns.offline_llm import OfflineLLMServer

FAKE_KEY = "sk-FAKE-ensemble-secret-7f3a9c"

ENSEMBLE = '''
[llm]
base_url = "https://api.deepseek.com/v1"
timeout = 120
[[llm.models]]
model = "deepseek-chat"
weight = 3
price = {input = 0.27, output = 1.10}
api_key_env = "DEEPSEEK_API_KEY"
[[llm.models]]
model = "gpt-4o-mini"
base_url = "https://api.openai.com/v1"
api_key_env = "OPENAI_API_KEY"
temperature = 0.7
weight = 1
price = {input = 0.15, output = 0.60}
'''


def write(tmp_path, text, name="llm.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def config(model="m", **kw):
    return LLMConfig(base_url="http://x/v1", model=model, **kw)


# -- the single-model form -------------------------------------------------------------------

def test_single_model_file_with_price(tmp_path):
    path = write(tmp_path, '[llm]\nbase_url = "http://file/v1"\nmodel = "deepseek-chat"\n'
                           'temperature = 0.3\nprice = {input = 0.27, output = 1.10}\n')
    ens = Ensemble.load(path, env={})
    assert len(ens) == 1
    (e,) = ens.entries
    assert (e.name, e.weight, e.price) == ("deepseek-chat", 1.0, Price(0.27, 1.10))
    assert e.config == LLMConfig.load(path, env={})  # LLMConfig accepts and ignores the price
    assert ens.priced
    no_price = write(tmp_path, 'base_url = "http://file/v1"\nmodel = "m"\n', "plain.toml")
    assert Ensemble.load(no_price, env={}).entries[0].price is None
    assert not Ensemble.load(no_price, env={}).priced


def test_single_model_precedence_is_that_of_llmconfig(tmp_path):
    path = write(tmp_path, '[llm]\nbase_url = "http://file/v1"\nmodel = "file-model"\n'
                           'timeout = 30\napi_key_env = "MY_KEY"\nprice = {input = 1, output = 2}\n')
    env = {"MY_KEY": "k-file", "GLNS_LLM_TIMEOUT": "12.5", "GLNS_LLM_API_KEY": "k-glns"}
    ens = Ensemble.load(path, env=env, model="flag-model", base_url="http://flag/v1", temperature=None)
    assert ens.entries[0].config == LLMConfig.load(path, env=env, model="flag-model",
                                                   base_url="http://flag/v1")
    c = ens.entries[0].config
    assert (c.model, c.base_url, c.timeout, c.api_key) == ("flag-model", "http://flag/v1", 12.5, "k-glns")
    assert ens.entries[0].name == "flag-model"
    # no file at all: environment and flags describe one model; GLNS_LLM_CONFIG names a file
    only_env = Ensemble.load(env={"GLNS_LLM_BASE_URL": "http://env/v1"}, model="m")
    assert [(e.name, e.config.base_url, e.price) for e in only_env.entries] == [("m", "http://env/v1", None)]
    assert len(Ensemble.load(env={"GLNS_LLM_CONFIG": str(write(tmp_path, ENSEMBLE, "e.toml"))})) == 2


def test_single_constructor():
    ens = Ensemble.single(config("solo"), Price(1, 2))
    assert [(e.name, e.weight, e.price) for e in ens.entries] == [("solo", 1.0, Price(1.0, 2.0))]


# -- the ensemble form ---------------------------------------------------------------------

def test_ensemble_file_is_parsed(tmp_path):
    env = {"DEEPSEEK_API_KEY": "k-deepseek", "OPENAI_API_KEY": "k-openai"}
    ens = Ensemble.load(write(tmp_path, ENSEMBLE), env=env)
    ds, oa = ens.entries
    assert (ds.name, ds.weight, ds.price) == ("deepseek-chat", 3.0, Price(0.27, 1.10))
    assert (oa.name, oa.weight, oa.price) == ("gpt-4o-mini", 1.0, Price(0.15, 0.60))
    assert (ds.config.base_url, ds.config.timeout, ds.config.temperature, ds.config.api_key) == \
        ("https://api.deepseek.com/v1", 120, 1.0, "k-deepseek")
    assert (oa.config.base_url, oa.config.timeout, oa.config.temperature, oa.config.api_key) == \
        ("https://api.openai.com/v1", 120, 0.7, "k-openai")
    assert ens.priced and ens.entry("gpt-4o-mini") is oa


def test_ensemble_precedence(tmp_path):
    path = write(tmp_path, '''
base_url = "http://top/v1"
timeout = 60
temperature = 0.2
api_key_env = "TOP_KEY"
[[models]]
model = "a"
timeout = 10
[[models]]
model = "b"
base_url = "http://b/v1"
temperature = 0.9
api_key = "k-b-file"
[[models]]
model = "c"
api_key_env = "UNSET_KEY"
''')
    env = {"TOP_KEY": "k-top", "GLNS_LLM_API_KEY": "k-glns", "GLNS_LLM_TIMEOUT": "7",
           "GLNS_LLM_BASE_URL": "http://env/v1", "GLNS_LLM_MODEL": "env-model"}
    a, b, c = Ensemble.load(path, env=env).entries
    # env tuning beats the model table and the top level; the file's endpoints win over env
    assert [e.config.timeout for e in (a, b, c)] == [7, 7, 7]
    assert [e.config.temperature for e in (a, b, c)] == [0.2, 0.9, 0.2]
    assert [e.config.base_url for e in (a, b, c)] == ["http://top/v1", "http://b/v1", "http://top/v1"]
    assert [e.name for e in (a, b, c)] == ["a", "b", "c"]
    # keys named in the file win; a named but unset variable gives no key (no fallback)
    assert [e.config.api_key for e in (a, b, c)] == ["k-top", "k-b-file", None]
    # flags beat env and apply to every model
    a, b, c = Ensemble.load(path, env=env, temperature=1.5, timeout=3, max_retries=None).entries
    assert {(e.config.temperature, e.config.timeout, e.config.max_retries) for e in (a, b, c)} == {(1.5, 3, 5)}


def test_env_endpoint_and_key_are_fallbacks_in_an_ensemble(tmp_path):
    path = write(tmp_path, '[[models]]\nmodel = "a"\n[[models]]\nmodel = "b"\n'
                           'base_url = "http://b/v1"\napi_key_env = "B_KEY"\n')
    env = {"OPENAI_BASE_URL": "http://openai-env/v1", "OPENAI_API_KEY": "k-openai", "B_KEY": "k-b"}
    a, b = Ensemble.load(path, env=env).entries
    assert (a.config.base_url, a.config.api_key) == ("http://openai-env/v1", "k-openai")
    assert (b.config.base_url, b.config.api_key) == ("http://b/v1", "k-b")
    with pytest.raises(LLMConfigError, match=r"\[\[models\]\] #1 in .*base URL not set"):
        Ensemble.load(path, env={})


def test_names_are_made_unique_and_top_level_price_is_shared(tmp_path):
    path = write(tmp_path, '''
base_url = "http://x/v1"
price = {input = 1, output = 2}
[[models]]
model = "m"
[[models]]
model = "m"
temperature = 0.2
[[models]]
model = "m"
name = "m#2"
price = {input = 0, output = 0}
[[models]]
model = "other"
name = "m"
''')
    ens = Ensemble.load(path, env={})
    assert [e.name for e in ens.entries] == ["m#3", "m#4", "m#2", "m"]
    assert [e.config.model for e in ens.entries] == ["m", "m", "m", "other"]
    assert [e.price for e in ens.entries] == [Price(1, 2), Price(1, 2), Price(0, 0), Price(1, 2)]


def test_ensemble_rejects_endpoint_overrides(tmp_path):
    path = write(tmp_path, ENSEMBLE)
    for flag, kw in (("--model", {"model": "x"}), ("--base-url", {"base_url": "http://x/v1"}),
                     ("api_key", {"api_key": "k"})):
        with pytest.raises(LLMConfigError, match=f"{flag} cannot be combined with an ensemble of 2 "
                                                 f"models in {path}"):
            Ensemble.load(path, env={}, **kw)
    assert len(Ensemble.load(path, env={}, model=None, base_url=None)) == 2  # unset flags are fine
    with pytest.raises(LLMConfigError, match="unknown LLM setting.*colour"):
        Ensemble.load(path, env={}, colour="red")


def test_llmconfig_refuses_an_ensemble_file(tmp_path):
    path = write(tmp_path, ENSEMBLE)
    with pytest.raises(LLMConfigError, match="ensemble of 2 models.*Ensemble.load"):
        LLMConfig.load(path, env={})


HEAD = 'base_url = "http://x/v1"\n'


@pytest.mark.parametrize("body,match", [
    ('[[models]]\nmodel = "a"\nweight = 0\n', r"weight in \[\[models\]\] #1 .* > 0, got 0"),
    ('[[models]]\nmodel = "a"\n[[models]]\nmodel = "b"\nweight = -2\n', r"weight in \[\[models\]\] #2"),
    ('[[models]]\nmodel = "a"\nweight = inf\n', "weight .* finite number > 0, got inf"),
    ('[[models]]\nmodel = "a"\nweight = nan\n', "weight .* got nan"),
    ('[[models]]\nmodel = "a"\nweight = "3"\n', "weight .* got '3'"),
    ('[[models]]\nmodel = "a"\nweight = true\n', "weight .* got True"),
    ('[[models]]\nmodel = "a"\nprice = {input = 1}\n', r"price in \[\[models\]\] #1 .* lacks output"),
    ('[[models]]\nmodel = "a"\nprice = {output = 1}\n', "lacks input"),
    ('[[models]]\nmodel = "a"\nprice = {input = 1, output = 2, cache = 0.1}\n', "unknown key.*cache"),
    ('[[models]]\nmodel = "a"\nprice = {input = -0.1, output = 2}\n', "price input must be .* >= 0"),
    ('[[models]]\nmodel = "a"\nprice = {input = 1, output = inf}\n', "price output must be a finite"),
    ('[[models]]\nmodel = "a"\nprice = 0.5\n', "must be a table of input and output"),
    ('price = {input = 1}\n[[models]]\nmodel = "a"\n', "price at the top .* lacks output"),
    ('[[models]]\nmodel = "a"\nmodle = "b"\n',
     r"unknown key\(s\) in \[\[models\]\] #1 .*: modle \(allowed: .*api_key_env.*price.*weight"),
    ('models = []\n', "models in .* is empty"),
    ('models = ["a", "b"]\n', "array of tables"),
    ('[[models]]\nmodel = "a"\nname = "x"\n[[models]]\nmodel = "b"\nname = "x"\n',
     "name.* given twice in .*: x"),
    ('[[models]]\nmodel = "a"\nname = ""\n', "name in .* non-empty string"),
    ('weight = 2\n[[models]]\nmodel = "a"\n',
     r"unknown key\(s\) at the top of .*: weight.*weight and name go in each"),
    ('[[models]]\nmodel = "a"\ntemperature = 3\n', r"\[\[models\]\] #1 in .*: LLM temperature"),
    ('[[models]]\nmodel = "a"\napi_key_env = 5\n', "api_key_env in .* must be a variable name"),
])
def test_ensemble_validation_errors(tmp_path, body, match):
    with pytest.raises(LLMConfigError, match=match):
        Ensemble.load(write(tmp_path, HEAD + body), env={})


def test_single_model_price_is_validated(tmp_path):
    path = write(tmp_path, HEAD + 'model = "a"\nprice = {input = 1, output = -1}\n')
    with pytest.raises(LLMConfigError, match="price in .*: price output must be"):
        Ensemble.load(path, env={})
    LLMConfig.load(path, env={})  # the single-endpoint loader ignores prices


def test_direct_construction_is_validated():
    with pytest.raises(LLMConfigError, match="at least one model"):
        Ensemble(())
    with pytest.raises(LLMConfigError, match="unique.*repeated: m"):
        Ensemble((ModelEntry("m", config()), ModelEntry("m", config("n"))))
    with pytest.raises(LLMConfigError, match="weight must be a finite number > 0"):
        ModelEntry("m", config(), weight=0)
    with pytest.raises(LLMConfigError, match="weight"):
        ModelEntry("m", config(), weight=math.nan)
    with pytest.raises(LLMConfigError, match="price input"):
        Price(-1, 0)
    with pytest.raises(LLMConfigError, match="price output"):
        Price(0, math.inf)


# -- choosing --------------------------------------------------------------------------------

class CountingRandom(random.Random):
    """A Random that counts its random() draws."""

    draws = 0

    def random(self) -> float:
        self.draws += 1
        return super().random()


class Fixed:
    def __init__(self, u: float) -> None:
        self.u = u

    def random(self) -> float:
        return self.u


def three_to_one() -> Ensemble:
    return Ensemble((ModelEntry("a", config("a"), 3), ModelEntry("b", config("b"), 1)))


@pytest.mark.parametrize("weights", [(3, 1), (1, 2, 5)])
def test_choose_frequencies_follow_the_weights(weights):
    ens = Ensemble(tuple(ModelEntry(f"m{i}", config(f"m{i}"), w) for i, w in enumerate(weights)))
    n = 4000
    rng = random.Random(12345)
    counts = {e.name: 0 for e in ens.entries}
    for _ in range(n):
        counts[ens.choose(rng).name] += 1
    for (name, count), w in zip(counts.items(), weights):
        p = w / sum(weights)
        sd = math.sqrt(n * p * (1 - p))  # binomial sd of the count
        assert abs(count - n * p) <= 4 * sd, (name, count, n * p, sd)


def test_choose_maps_one_draw_onto_cumulative_weights():
    ens = three_to_one()  # cumulative 3, 4: u in [0, 0.75) -> a, [0.75, 1) -> b
    assert [ens.choose(Fixed(u)).name for u in (0.0, 0.7499, 0.75, 0.9999999999999999)] == \
        ["a", "a", "b", "b"]


def test_choose_is_deterministic_and_draws_once():
    ens = three_to_one()
    one, two = CountingRandom(7), CountingRandom(7)
    assert [ens.choose(one).name for _ in range(50)] == [ens.choose(two).name for _ in range(50)]
    assert one.draws == 50
    # exactly one draw each: the rng is where a plain Random with one random() per call is
    mirror = random.Random(7)
    for _ in range(50):
        mirror.random()
    assert one.getstate() == mirror.getstate()
    assert len({ens.choose(random.Random(s)).name for s in range(40)}) == 2


def test_choose_with_one_model_does_not_draw():
    ens = Ensemble.single(config("solo"))
    rng = CountingRandom(3)
    before = rng.getstate()
    assert all(ens.choose(rng).name == "solo" for _ in range(10))
    assert rng.draws == 0 and rng.getstate() == before


# -- prices, costs, snapshots ------------------------------------------------------------------

def test_cost_arithmetic():
    price = Price(0.27, 1.10)
    assert price.cost(1_000_000, 0) == pytest.approx(0.27)
    assert price.cost(0, 1_000_000) == pytest.approx(1.10)
    assert price.cost(2000, 500) == pytest.approx((2000 * 0.27 + 500 * 1.10) / 1e6)
    assert price.cost(0, 0) == 0.0
    with pytest.raises(ValueError, match="prompt_tokens must be >= 0"):
        price.cost(-1, 0)
    with pytest.raises(TypeError, match="completion_tokens must be an integer"):
        price.cost(1, None)
    ens = Ensemble((ModelEntry("paid", config("p"), price=price), ModelEntry("free", config("f"))))
    assert ens.cost("paid", 2000, 500) == pytest.approx(0.00109)
    assert ens.cost("free", 2000, 500) is None
    assert not ens.priced
    with pytest.raises(LLMConfigError, match="no model named 'nope'.*known: paid, free"):
        ens.cost("nope", 1, 1)


def test_prices_and_to_dict_hold_no_secrets(tmp_path):
    env = {"DEEPSEEK_API_KEY": FAKE_KEY, "OPENAI_API_KEY": FAKE_KEY, "GLNS_LLM_API_KEY": FAKE_KEY}
    ens = Ensemble.load(write(tmp_path, ENSEMBLE), env=env)
    assert all(e.config.api_key == FAKE_KEY for e in ens.entries)  # the key is really loaded
    prices, settings = json.dumps(ens.prices()), json.dumps(ens.to_dict())
    assert FAKE_KEY not in prices and FAKE_KEY not in settings and FAKE_KEY not in repr(ens)
    assert ens.prices() == {
        "deepseek-chat": {"model": "deepseek-chat", "base_url": "https://api.deepseek.com/v1",
                          "input": 0.27, "output": 1.10, "currency": "USD per 1M tokens"},
        "gpt-4o-mini": {"model": "gpt-4o-mini", "base_url": "https://api.openai.com/v1",
                        "input": 0.15, "output": 0.60, "currency": "USD per 1M tokens"}}
    d = ens.to_dict()
    assert d["priced"] is True
    assert [(m["name"], m["weight"], m["price"], m["api_key"], m["temperature"]) for m in d["models"]] == [
        ("deepseek-chat", 3.0, {"input": 0.27, "output": 1.10}, "<set>", 1.0),
        ("gpt-4o-mini", 1.0, {"input": 0.15, "output": 0.60}, "<set>", 0.7)]
    single = Ensemble.single(config("m", api_key=FAKE_KEY))
    assert FAKE_KEY not in json.dumps(single.prices()) + json.dumps(single.to_dict())
    assert single.prices()["m"]["input"] is None


# -- calls through the offline server ------------------------------------------------------------

PROMPT = "Design a new operator.\n" + markers.marker_lines("cvrp", "destroy")


def test_chosen_models_are_called_end_to_end(tmp_path):
    pytest.importorskip("openai")
    with OfflineLLMServer(seed=5) as server:
        path = write(tmp_path, f'''
base_url = "{server.base_url}"
timeout = 5
[[models]]
model = "offline:good"
price = {{input = 0.5, output = 2.0}}
[[models]]
model = "offline:good=vrp/shaw_removal"
name = "shaw"
weight = 2
price = {{input = 1.0, output = 4.0}}
''')
        ens = Ensemble.load(path, env={})
        rng = random.Random(0)
        seen = set()
        for _ in range(8):
            entry = ens.choose(rng)
            reply = LLMClient(entry.config, rng=random.Random(0)).complete(PROMPT, seed=1)
            rec = reply.record
            assert rec.ok and rec.model == entry.config.model == server.log[-1]["model"]
            if entry.name == "shaw":
                assert server.log[-1]["served"] == "good:vrp/shaw_removal"
            cost = ens.cost(entry.name, rec.prompt_tokens, rec.completion_tokens)
            assert cost == pytest.approx((rec.prompt_tokens * entry.price.input
                                          + rec.completion_tokens * entry.price.output) / 1e6)
            assert cost > 0
            seen.add(entry.name)
        assert seen == {"offline:good", "shaw"}
