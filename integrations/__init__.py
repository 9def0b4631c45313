"""Where the validator plugs into agent hosts (installed as ``validator.integrations``).

- :mod:`.tools`: ``@guarded``, a decorator on plain functions and LangChain tools.
- :mod:`.langgraph`: validation nodes between the model node and the ``ToolNode``.
- :mod:`.middleware`: LangChain v1 agent middleware for ``create_agent``.
- :mod:`.anthropic`: the tool calls of a raw Anthropic loop, in three lines.
- :mod:`.claude`: sharing a ChatAnthropic agent's prompt cache with the validator.
- :mod:`.pydantic_ai`: a Pydantic AI toolset wrapper (refusals as failed tool results, escalation
  through deferred-tool approvals).
- :mod:`.openai_agents`: tool input guardrails for the OpenAI Agents SDK.
- :mod:`.service`: ``validator serve``, the HTTP decision service, and its fail-closed client.
- :mod:`._host`: what every host adapter shares (refusal text, justification, user id, the bounded cache).
- :mod:`._review`: asking the user, in LangChain's human-in-the-loop shapes, and reading the answer.
- :mod:`._guard`: the guard of one ``@guarded`` tool, shared by a guarded function and a guarded LangChain tool.
- :mod:`._lifecycle`: ``ToolCallGuard``, the life of one guarded call, which every adapter translates to.

Each module imports its framework; ``import validator`` imports none.
"""
