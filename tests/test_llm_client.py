"""The LLM client (glns.llm): configuration, retries against the offline server with the real
openai package, accounting, and answer parsing."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from glns.llm import (
    AnswerParseError, LLMClient, LLMConfig, LLMConfigError, LLMError, markers, parse_answer,
    parse_joint_answer,
)
from glns.offline_llm import OfflineLLMServer

openai = pytest.importorskip("openai")

PROMPT = "Design a new operator.\n" + markers.marker_lines("cvrp", "destroy")


@pytest.fixture(scope="module")
def server():
    with OfflineLLMServer(seed=2) as srv:
        yield srv


class Sleeps(list):
    """An injected sleep that records instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_client(server, model="offline", sleeps=None, **cfg):
    cfg.setdefault("timeout", 5.0)
    config = LLMConfig(base_url=server.base_url, model=model, **cfg)
    return LLMClient(config, sleep=sleeps if sleeps is not None else Sleeps(), rng=random.Random(0))


# -- configuration -----------------------------------------------------------------------

def test_config_precedence_file_env_overrides(tmp_path):
    path = tmp_path / "llm.toml"
    path.write_text('[llm]\nbase_url = "http://file/v1"\nmodel = "file-model"\ntemperature = 0.3\n'
                    'timeout = 30\napi_key_env = "MY_KEY"\n')
    env = {"MY_KEY": "k-file"}
    cfg = LLMConfig.load(path, env=env)
    assert (cfg.base_url, cfg.model, cfg.temperature, cfg.timeout, cfg.api_key) == \
        ("http://file/v1", "file-model", 0.3, 30, "k-file")
    env.update(GLNS_LLM_MODEL="env-model", GLNS_LLM_TIMEOUT="12.5", OPENAI_API_KEY="k-openai",
               GLNS_LLM_MAX_RETRIES="2")
    cfg = LLMConfig.load(path, env=env)
    assert (cfg.model, cfg.timeout, cfg.api_key, cfg.max_retries) == ("env-model", 12.5, "k-openai", 2)
    env["GLNS_LLM_API_KEY"] = "k-glns"
    cfg = LLMConfig.load(path, env=env, model="flag-model", temperature=None)
    assert (cfg.model, cfg.api_key, cfg.temperature) == ("flag-model", "k-glns", 0.3)
    # the file named by GLNS_LLM_CONFIG, keys at the top level
    top = tmp_path / "top.toml"
    top.write_text('base_url = "https://api.example.com/v1"\nmodel = "m"\n')
    assert LLMConfig.load(env={"GLNS_LLM_CONFIG": str(top)}).base_url == "https://api.example.com/v1"
    assert LLMConfig.load(env={"GLNS_LLM_BASE_URL": "http://x/v1", "GLNS_LLM_MODEL": "m"}).max_retries == 5


def test_config_errors_are_clear(tmp_path):
    with pytest.raises(LLMConfigError, match="model not set.*GLNS_LLM_MODEL"):
        LLMConfig.load(env={"GLNS_LLM_BASE_URL": "http://x/v1"})
    with pytest.raises(LLMConfigError, match="base URL not set"):
        LLMConfig.load(env={"GLNS_LLM_MODEL": "m"})
    with pytest.raises(LLMConfigError, match="http:// or https://"):
        LLMConfig(base_url="localhost:8000", model="m")
    with pytest.raises(LLMConfigError, match="GLNS_LLM_TIMEOUT='soon' is not a number"):
        LLMConfig.load(env={"GLNS_LLM_BASE_URL": "http://x/v1", "GLNS_LLM_MODEL": "m",
                            "GLNS_LLM_TIMEOUT": "soon"})
    for bad, match in (({"temperature": 3}, "temperature"), ({"timeout": 0}, "timeout"),
                       ({"max_retries": -1}, "max_retries"), ({"backoff_base": 0}, "backoff_base"),
                       ({"backoff_base": 5, "backoff_max": 1}, "backoff_max"),
                       ({"max_tokens": 0}, "max_tokens")):
        with pytest.raises(LLMConfigError, match=match):
            LLMConfig(base_url="http://x/v1", model="m", **bad)
    typo = tmp_path / "typo.toml"
    typo.write_text('base_url = "http://x/v1"\nmodle = "m"\n')
    with pytest.raises(LLMConfigError, match="unknown key.*modle"):
        LLMConfig.load(typo, env={})
    broken = tmp_path / "broken.toml"
    broken.write_text("model = \n")
    with pytest.raises(LLMConfigError, match="not valid TOML"):
        LLMConfig.load(broken, env={})
    with pytest.raises(LLMConfigError, match="not found"):
        LLMConfig.load(tmp_path / "missing.toml", env={})
    with pytest.raises(LLMConfigError, match="unknown LLM setting"):
        LLMConfig.load(env={}, colour="red")


def test_api_key_is_never_shown():
    cfg = LLMConfig(base_url="http://x/v1", model="m", api_key="sk-secret")
    assert "sk-secret" not in repr(cfg)
    assert "sk-secret" not in json.dumps(cfg.to_dict())
    assert cfg.to_dict()["api_key"] == "<set>"


def test_core_and_llm_package_import_without_openai():
    code = ("import sys; sys.modules['openai'] = None\n"
            "import glns, glns.llm, glns.offline_llm\n"
            "from glns.llm import LLMClient, LLMConfig, LLMError\n"
            "c = LLMClient(LLMConfig(base_url='http://127.0.0.1:9/v1', model='m'))\n"
            "try:\n    c.complete('hello')\nexcept LLMError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "pip install 'glns[llm]'" in out.stdout


# -- calls, retries, accounting ------------------------------------------------------------

def test_successful_call_records_tokens_and_latency(server):
    client = make_client(server)
    reply = client.complete(PROMPT, system="You are an expert.")
    rec = reply.record
    assert rec.ok and rec.attempts == 1 and rec.status == 200 and rec.errors == []
    assert rec.prompt_tokens > 0 and rec.completion_tokens > 0
    assert rec.total_tokens == rec.prompt_tokens + rec.completion_tokens
    assert rec.latency > 0 and len(rec.attempt_seconds) == 1
    assert rec.model == "offline" and rec.response_id.startswith("chatcmpl-")
    assert rec.finish_reason == "stop"
    assert (client.calls, client.prompt_tokens, client.completion_tokens) == \
        (1, rec.prompt_tokens, rec.completion_tokens)
    json.dumps(rec.to_dict())  # ready for the JSON-lines log
    assert parse_answer(reply.text).code


@pytest.mark.parametrize("status", [429, 500, 503])
def test_retries_with_growing_backoff(server, status):
    sleeps = Sleeps()
    client = make_client(server, f"offline:fail={status}x3,good", sleeps, backoff_base=0.5,
                         backoff_max=30)
    reply = client.complete(PROMPT)
    rec = reply.record
    assert rec.ok and rec.attempts == 4
    assert len(rec.errors) == 3 and all(e.startswith(f"HTTP {status}") for e in rec.errors)
    assert list(sleeps) == rec.sleeps and len(sleeps) == 3
    assert sleeps == sorted(sleeps) and sleeps[-1] > sleeps[0]
    for n, wait in enumerate(sleeps, start=1):  # equal jitter: in [d/2, d], d = 0.5 * 2**(n-1)
        assert 0.25 * 2 ** (n - 1) <= wait <= 0.5 * 2 ** (n - 1)
    assert server.log[-1]["served"].startswith("good:")


def test_gives_up_after_max_retries(server):
    sleeps = Sleeps()
    client = make_client(server, "offline:fail=429x10", sleeps, max_retries=2)
    with pytest.raises(LLMError, match=r"HTTP 429.*gave up after 3 attempts") as info:
        client.complete(PROMPT)
    err = info.value
    assert err.status == 429 and err.retryable
    assert err.record.attempts == 3 and not err.record.ok and len(sleeps) == 2
    assert client.failed_calls == 1


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_no_retry_on_other_4xx(server, status):
    sleeps = Sleeps()
    client = make_client(server, f"offline:fail={status}x1", sleeps)
    with pytest.raises(LLMError, match=f"refused the request \\(HTTP {status}\\): simulated") as info:
        client.complete(PROMPT)
    assert info.value.status == status and not info.value.retryable
    assert info.value.record.attempts == 1 and sleeps == []


def test_invalid_request_is_not_retried(server):
    client = make_client(server, "offline:nonsense")
    with pytest.raises(LLMError, match="HTTP 400.*unknown offline directive"):
        client.complete(PROMPT)


def test_connection_drop_is_retried(server):
    client = make_client(server, "offline:fail=closex2,good")
    rec = client.complete(PROMPT).record
    assert rec.ok and rec.attempts == 3
    assert all(e.startswith("connection error") for e in rec.errors)


def test_timeout_is_retried_then_succeeds(server):
    client = make_client(server, "offline:slow=1.5x1,good", timeout=0.3)
    rec = client.complete(PROMPT).record
    assert rec.ok and rec.attempts == 2
    assert rec.errors == ["timeout after 0.3 s"]
    assert rec.attempt_seconds[0] >= 0.3


def test_timeout_every_time_raises(server):
    client = make_client(server, "offline:slow=1.5,good", timeout=0.2, max_retries=1)
    with pytest.raises(LLMError, match="timed out after 0.2 s.*gave up after 2") as info:
        client.complete(PROMPT)
    assert info.value.status is None and info.value.retryable
    assert info.value.record.errors == ["timeout after 0.2 s"] * 2


def test_unreachable_endpoint():
    config = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", max_retries=1, timeout=2)
    client = LLMClient(config, sleep=Sleeps(), rng=random.Random(0))
    with pytest.raises(LLMError, match="cannot reach the LLM endpoint") as info:
        client.complete("hello")
    assert info.value.record.attempts == 2


def test_backoff_is_capped_and_honours_retry_after():
    cfg = LLMConfig(base_url="http://x/v1", model="m", backoff_base=1, backoff_max=4)
    client = LLMClient(cfg, rng=random.Random(1))
    assert all(2 <= client.backoff(n) <= 4 for n in range(3, 12))
    assert client.backoff(1, retry_after=3.0) == 3.0
    assert client.backoff(1, retry_after=100.0) == 4.0


def test_per_call_options_reach_the_server(server):
    client = make_client(server, "offline")
    a = client.complete([{"role": "user", "content": PROMPT}], seed=42, temperature=0.2,
                        max_tokens=500)
    b = client.complete([{"role": "user", "content": PROMPT}], seed=42)
    assert a.text == b.text  # the offline server derives the answer from the request seed
    with pytest.raises(ValueError, match="role"):
        client.complete([{"content": "x"}])
    with pytest.raises(ValueError, match="no messages"):
        client.complete([])


# -- answer parsing ------------------------------------------------------------------------

CODE = "def destroy(x, destroy_cnt, problem_data):\n    return [], list(x)\n"


@pytest.mark.parametrize("text,idea", [
    ("{Remove a random segment.}\n\n```python\n" + CODE + "```", "Remove a random segment."),
    ("Idea below.\n{Remove\n  a segment.}\n```py\n" + CODE + "```\nDone.", "Remove a segment."),
    ("{Plain fence.}\n```\n" + CODE + "```", "Plain fence."),
    ("```python\n" + CODE + "```", None),
    ("{Cut off by the token limit.}\n```python\n" + CODE, "Cut off by the token limit."),
    ("{}\n```Python\n" + CODE + "```", None),
])
def test_parse_answer_formats(text, idea):
    parsed = parse_answer(text)
    assert parsed.idea == idea
    assert parsed.code == CODE


def test_parse_answer_takes_first_python_block_and_idea_outside_code():
    text = ("```text\nnot code {not the idea}\n```\n{The idea.}\n"
            "```python\nd = {'a': 1}\n" + CODE + "```\n```python\nprint('second')\n```")
    parsed = parse_answer(text)
    assert parsed.idea == "The idea."
    assert parsed.code.startswith("d = {'a': 1}") and "second" not in parsed.code


@pytest.mark.parametrize("text", ["{Only an idea.}", "", "    def destroy(x, k, d):\n        pass",
                                  "```text\nhello\n```", "```python\n\n```"])
def test_parse_answer_without_code_block(text):
    with pytest.raises(AnswerParseError, match="answer has no python code block"):
        parse_answer(text)


JOINT_ONE_BLOCK = '''{Remove a string; reinsert it greedily.}

```python
import random
import numpy as np

SCALE = 2.0


def shared_helper(v):
    return v * SCALE


def string_removal(x, destroy_cnt, problem_data):
    return [], list(x)


def greedy_insertion(partial, removed, problem_data):
    return list(partial) + list(removed)
```
'''


def _run(source, name, *args):
    ns: dict = {}
    exec(source, ns)
    return ns[name](*args)


def test_parse_joint_answer_splits_one_block():
    joint = parse_joint_answer(JOINT_ONE_BLOCK)
    assert joint.idea == "Remove a string; reinsert it greedily."
    assert (joint.destroy_name, joint.repair_name) == ("string_removal", "greedy_insertion")
    assert "def greedy_insertion" not in joint.destroy and "def string_removal" not in joint.repair
    for src in (joint.destroy, joint.repair):
        assert "SCALE = 2.0" in src and "def shared_helper" in src and "import numpy" in src
    assert _run(joint.destroy, "string_removal", [3, 1, 2], 1, {}) == ([], [3, 1, 2])
    assert _run(joint.repair, "greedy_insertion", [3], [1], {}) == [3, 1]


def test_parse_joint_answer_variants():
    two_blocks = ("{Pair.}\n```python\ndef destroy(x, k, p):\n    return [], x\n```\n"
                  "and\n```python\ndef repair(a, b, p):\n    return a + b\n```")
    joint = parse_joint_answer(two_blocks)
    assert (joint.destroy_name, joint.repair_name) == ("destroy", "repair")
    neutral = "```python\ndef alpha(x, k, p):\n    return [], x\n\ndef beta(a, b, p):\n    return a\n```"
    assert (parse_joint_answer(neutral).destroy_name, parse_joint_answer(neutral).repair_name) == \
        ("alpha", "beta")
    with pytest.raises(AnswerParseError, match="one destroy and one repair.*found: destroy"):
        parse_joint_answer("```python\ndef destroy(x, k, p):\n    return [], x\n```")
    with pytest.raises(AnswerParseError, match="syntax error in the code at line 1"):
        parse_joint_answer("```python\ndef destroy(x, k, p)\n    return [], x\n```")
    with pytest.raises(AnswerParseError, match="no python code block"):
        parse_joint_answer("{An idea only.}")


def test_parse_answer_dedents_a_fence_inside_a_list_item():
    text = "1. {Indented.}\n   ```python\n   def destroy(x, k, p):\n       return [], x\n   ```\n"
    parsed = parse_answer(text)
    assert parsed.code == "def destroy(x, k, p):\n    return [], x\n"
    compile(parsed.code, "<answer>", "exec")


def test_response_models_are_built_before_the_first_request():
    """openai builds its pydantic response models on first use, and not thread-safely: the
    client builds them all (nested ones included) when it is created, in one thread."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import typing
        from openai.types.chat import ChatCompletion
        from glns.llm.client import LLMClient
        from glns.llm.config import LLMConfig

        def models(t, seen):
            if t in seen:
                return
            seen.add(t)
            if isinstance(t, type) and isinstance(getattr(t, "model_fields", None), dict):
                for f in t.model_fields.values():
                    models(f.annotation, seen)
            for a in typing.get_args(t):
                try:
                    models(a, seen)
                except TypeError:
                    pass

        seen = set()
        models(ChatCompletion, seen)
        found = [t for t in seen if isinstance(t, type) and hasattr(t, "model_fields")]
        lazy = lambda: [t.__name__ for t in found if not isinstance(t.__dict__.get("__pydantic_core_schema__"), dict)]
        before = lazy()
        LLMClient(LLMConfig(base_url="http://127.0.0.1:9/v1", model="m"))._openai()
        print(len(found), len(before), lazy())
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    n, lazy_before, lazy_after = out.stdout.split(" ", 2)
    assert int(n) >= 5 and int(lazy_before) > 0      # openai defers them: the test means something
    assert lazy_after.strip() == "[]"
