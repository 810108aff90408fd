"""`glns evolve`: an offline run from the command line, extending it with --resume, and errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SMALL = ["--problem", "tsp", "--episodes-per-cycle", "2", "--train-count", "3", "--train-size", "20",
         "--iterations", "20", "--validation-count", "3", "--validation-size", "20",
         "--validation-iterations", "40", "--workers", "2", "--seed", "1"]


def _glns(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GLNS_LLM", "OPENAI"))}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "glns", "evolve", *args], capture_output=True,
                          text=True, timeout=600, env=env)


def test_offline_run_then_extend_with_resume(tmp_path):
    run = tmp_path / "run"
    out = _glns("--offline", "--generations", "4", "--run-dir", str(run), "--no-homogeneous-crossover",
                "--sigma", "aggressive", *SMALL)
    assert out.returncode == 0, out.stderr
    assert "offline test LLM at http://127.0.0.1:" in out.stderr
    assert "cycle 2/2 done: episodes 4/4" in out.stderr and "episode 3/4" in out.stderr
    assert "Best pair" in out.stdout and "best_operators.py" in out.stdout
    for name in ("checkpoint.json", "events.jsonl", "summary.txt", "convergence.png", "best_operators.py"):
        assert (run / name).stat().st_size > 0, name
    cfg = json.loads((run / "config.json").read_text())
    assert cfg["evolution"]["sigma"] == "aggressive" and cfg["evolution"]["no_homogeneous"]
    assert cfg["llm"]["offline"] and "api_key" not in cfg["llm"]

    more = _glns("--resume", str(run), "--generations", "6", "-q")
    assert more.returncode == 0, more.stderr
    assert "cycle 3/3 done: episodes 6/6" in more.stderr and "episode 5/6" not in more.stderr
    state = json.loads((run / "checkpoint.json").read_text())
    assert state["cycle"] == 3 and state["episodes"] == 6 and len(state["history"]) == 3

    again = _glns("--resume", str(run), "-q")      # keeps the extended budget: nothing to do
    assert again.returncode == 0 and "cycle" not in again.stderr.replace("cycle best", "")
    assert json.loads((run / "checkpoint.json").read_text())["episodes"] == 6

    shrink = _glns("--resume", str(run), "--generations", "2")
    assert shrink.returncode == 2 and "would shrink it" in shrink.stderr


def test_errors_are_precise(tmp_path):
    out = _glns("--generations", "2", "--run-dir", str(tmp_path / "x"))
    assert out.returncode == 2
    assert "base URL not set" in out.stderr and "--offline" in out.stderr
    out = _glns("--resume", str(tmp_path / "missing"))
    assert out.returncode == 2 and "not a glns evolution run" in out.stderr
    out = _glns("--offline", "--mix", "1,2", "--run-dir", str(tmp_path / "y"))
    assert out.returncode == 2 and "--mix needs three numbers" in out.stderr
    out = _glns("--offline", "--no-mutation", "--no-homogeneous-crossover", "--no-joint-crossover",
                "--run-dir", str(tmp_path / "z"))
    assert out.returncode == 2 and "keep at least one" in out.stderr


def test_offline_ensemble_with_prices_and_a_budget_from_the_command_line(tmp_path):
    """--llm-config with two models (no base_url: the offline server's) and prices; --max-cost
    stops the run, --resume with a larger one finishes it and keeps the ensemble."""
    config = tmp_path / "models.toml"
    config.write_text('[llm]\nmax_retries = 1\n'
                      '[[llm.models]]\nmodel = "offline:rate=0.1"\nweight = 2\nprice = {input = 1.0, output = 2.0}\n'
                      '[[llm.models]]\nmodel = "offline:rate=0.2"\nweight = 1\nprice = {input = 1.0, output = 2.0}\n')
    run = tmp_path / "run"
    out = _glns("--offline", "--llm-config", str(config), "--generations", "6", "--max-cost", "0.01",
                "--run-dir", str(run), "-q", *SMALL)
    assert out.returncode == 0, out.stderr
    assert "stopped by the cost budget" in out.stdout and "Stopped after cycle" in out.stdout
    assert ": request " not in out.stderr   # -q leaves out the per-request lines
    models = {m["name"] for m in json.loads((run / "config.json").read_text())["llm"]["models"]}
    assert models == {"offline:rate=0.1", "offline:rate=0.2"}
    more = _glns("--resume", str(run), "--max-cost", "1000", "-q")
    assert more.returncode == 0, more.stderr
    assert "cycle 3/3 done: episodes 6/6" in more.stderr
    calls = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()
             if '"llm_call"' in line]
    assert {c["model"] for c in calls} == models
    # --model cannot pick one model of an ensemble
    bad = _glns("--offline", "--llm-config", str(config), "--model", "x", "--run-dir",
                str(tmp_path / "bad"), *SMALL)
    assert bad.returncode == 2 and "cannot be combined" in bad.stderr


def test_ctrl_c_keeps_the_run_resumable(tmp_path):
    import signal
    import time

    run = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GLNS_LLM", "OPENAI"))}
    child = subprocess.Popen([sys.executable, "-m", "glns", "evolve", "--offline", "--generations", "40",
                              "--run-dir", str(run), *SMALL], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env)

    def episodes() -> int:
        try:
            return json.loads((run / "checkpoint.json").read_text())["episodes"]
        except (OSError, ValueError, KeyError):
            return 0

    deadline = time.time() + 300
    while episodes() < 2:            # the first cycle is saved
        assert time.time() < deadline and child.poll() is None, child.stderr.read() if child.poll() else ""
        time.sleep(0.1)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 130, err
    assert "interrupted; the last finished cycle is saved: glns evolve --resume" in err
    done = episodes()
    assert 2 <= done < 40
    more = _glns("--resume", str(run), "--generations", str(done + 2), "-q")
    assert more.returncode == 0, more.stderr
    assert episodes() == done + 2
