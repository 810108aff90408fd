"""Reading an LLM answer: the one-sentence idea in braces and the python code block.

The prompts (paper Appendix C) ask for ``{idea}`` followed by one python code block; the joint
crossover (``c2``) asks for one block holding both a destroy and a repair function. Real
answers wander from that format, so the parser accepts ```` ```python ````, ```` ```py ````
and bare ```` ``` ```` fences, several blocks, and a final fence cut off by a token limit.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from glns.exceptions import GlnsError
from glns.policy import parse_source

__all__ = ["AnswerParseError", "ParsedAnswer", "JointAnswer", "parse_answer",
           "parse_joint_answer", "code_blocks"]


class AnswerParseError(GlnsError, ValueError):
    """The answer does not contain what was asked (no code block, no destroy/repair pair)."""


@dataclass(frozen=True)
class ParsedAnswer:
    """idea: the sentence inside the first ``{...}`` outside code (None if absent);
    code: the first python code block."""

    idea: str | None
    code: str


@dataclass(frozen=True)
class JointAnswer:
    """A c2 answer split into two self-contained sources.

    destroy, repair: code of each operator, each with the answer's imports, constants and
    top-level helpers; destroy_name, repair_name: their entry functions (pass as ``function=``
    to :func:`glns.operators.from_source`).
    """

    idea: str | None
    destroy: str
    repair: str
    destroy_name: str
    repair_name: str


_FENCE = re.compile(r"^[ \t]*```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)",
                    re.DOTALL | re.MULTILINE)
_PY_LANGS = {"", "python", "py", "python3", "py3"}
_IDEA = re.compile(r"\{([^{}]*)\}", re.DOTALL)
_DESTROY_HINTS = ("destroy", "remov", "ruin")
_REPAIR_HINTS = ("repair", "insert", "recreate", "rebuild")


def code_blocks(text: str) -> list[tuple[str, str, tuple[int, int]]]:
    """Every fenced block: (language, code, (start, end) span in text)."""
    return [(m.group(1).lower(), m.group(2), m.span()) for m in _FENCE.finditer(text)]


def _outside(text: str, spans: list[tuple[int, int]]) -> str:
    pieces, last = [], 0
    for start, end in spans:
        pieces.append(text[last:start])
        pieces.append("\n")
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _idea(text: str, spans: list[tuple[int, int]]) -> str | None:
    m = _IDEA.search(_outside(text, spans))
    if not m:
        return None
    idea = " ".join(m.group(1).split())
    return idea or None


def _python_blocks(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    if not isinstance(text, str):
        raise AnswerParseError(f"answer must be text, got {type(text).__name__}")
    blocks = code_blocks(text)
    # dedent: fences nested in a list item carry the item's indentation into the code
    code = [textwrap.dedent(c) for lang, c, _ in blocks if lang in _PY_LANGS and c.strip()]
    return code, [span for _, _, span in blocks]


def parse_answer(text: str) -> ParsedAnswer:
    """Idea and code of a single-operator answer.

    Raises AnswerParseError("answer has no python code block") when no fenced block with
    python (or no) language and non-empty content exists.
    """
    code, spans = _python_blocks(text)
    if not code:
        raise AnswerParseError("answer has no python code block")
    return ParsedAnswer(idea=_idea(text, spans), code=code[0].rstrip() + "\n")


def _pick(funcs: list[ast.FunctionDef]) -> tuple[ast.FunctionDef, ast.FunctionDef]:
    by_name = {f.name: f for f in funcs}
    if "destroy" in by_name and "repair" in by_name:
        return by_name["destroy"], by_name["repair"]
    d = [f for f in funcs if any(h in f.name.lower() for h in _DESTROY_HINTS)]
    r = [f for f in funcs if any(h in f.name.lower() for h in _REPAIR_HINTS)]
    if len(d) == 1 and len(r) == 1 and d[0] is not r[0]:
        return d[0], r[0]
    if len(funcs) == 2:  # no telling names: the prompt asks for destroy first
        return funcs[0], funcs[1]
    names = ", ".join(f.name for f in funcs) or "none"
    raise AnswerParseError(
        "joint answer must define one destroy and one repair function (named 'destroy' and "
        f"'repair'); top-level functions found: {names}")


def parse_joint_answer(text: str) -> JointAnswer:
    """Idea, destroy code and repair code of a joint-crossover (c2) answer.

    All python blocks are read as one program (one block is what the prompt asks for; two
    blocks, one per operator, work too). The entry functions are ``destroy`` and ``repair``
    if defined, else the one function whose name suggests removal and the one suggesting
    insertion, else the only two top-level functions in order. Each returned source keeps the
    imports, constants and other top-level helpers, so it runs on its own.
    """
    code, spans = _python_blocks(text)
    if not code:
        raise AnswerParseError("answer has no python code block")
    program = "\n\n".join(c.rstrip() + "\n" for c in code)
    try:
        tree = parse_source(program)
    except SyntaxError as exc:
        raise AnswerParseError(f"syntax error in the code at line {exc.lineno}: {exc.msg}") from None
    funcs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    destroy, repair = _pick(funcs)
    lines = program.splitlines(keepends=True)

    def source(other: ast.stmt) -> str:
        first = min([other.lineno] + [d.lineno for d in other.decorator_list])
        kept = lines[:first - 1] + lines[other.end_lineno:]
        return re.sub(r"\n{4,}", "\n\n\n", "".join(kept)).strip("\n") + "\n"

    return JointAnswer(idea=_idea(text, spans), destroy=source(repair),
                       repair=source(destroy), destroy_name=destroy.name,
                       repair_name=repair.name)
