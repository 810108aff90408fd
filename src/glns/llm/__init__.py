"""LLM access for the evolution controller (optional extra ``llm``: the openai package).

Importing this package does not import openai; only :meth:`LLMClient.complete` needs it.

>>> cfg = LLMConfig.load("llm.toml", model="deepseek-chat")    # doctest: +SKIP
>>> reply = LLMClient(cfg).complete(prompt)                    # doctest: +SKIP
>>> answer = parse_answer(reply.text)                          # doctest: +SKIP
>>> models = Ensemble.load("llm.toml")                          # doctest: +SKIP
>>> entry = models.choose(rng)                                  # doctest: +SKIP
>>> reply = LLMClient(entry.config).complete(prompt)            # doctest: +SKIP
"""

from glns.llm.client import (
    CallRecord as CallRecord,
    LLMClient as LLMClient,
    LLMError as LLMError,
    LLMReply as LLMReply,
)
from glns.llm.config import ENV_VARS as ENV_VARS, LLMConfig as LLMConfig, LLMConfigError as LLMConfigError
from glns.llm.ensemble import Ensemble as Ensemble, ModelEntry as ModelEntry, Price as Price
from glns.llm.parsing import (
    AnswerParseError as AnswerParseError,
    JointAnswer as JointAnswer,
    ParsedAnswer as ParsedAnswer,
    parse_answer as parse_answer,
    parse_joint_answer as parse_joint_answer,
)
from glns.llm import markers as markers
