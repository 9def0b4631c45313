"""Where the validator plugs into agent hosts (installed as ``validator.integrations``).

- :mod:`.tools`: ``@guarded``, a decorator on plain functions and LangChain tools.
- :mod:`.langgraph`: validation nodes between the model node and the ``ToolNode``.
- :mod:`.middleware`: LangChain v1 agent middleware for ``create_agent``.
- :mod:`.anthropic`: the tool calls of a raw Anthropic loop, in three lines.
- :mod:`.claude`: sharing a ChatAnthropic agent's prompt cache with the validator.
- :mod:`.chat_model`: a judge over any LangChain chat model.
- :mod:`._host`: what every host adapter shares (refusal text, interrupt payload, answers, user id).

Each module imports its framework; ``import validator`` imports none.
"""
