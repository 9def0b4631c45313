"""A raw Anthropic Messages API loop guarded by ``check_tool_uses``, offline (the model's answers are scripted).

With ``ANTHROPIC_API_KEY`` set and ``--live``, the same loop calls Claude. Each answer's ``tool_use``
blocks are validated before any runs: the allowed ones run (justification stripped), the refused
ones go back to the model as ``tool_result`` errors. Run: ``python examples/anthropic_loop.py``.
"""

from __future__ import annotations

import sys
from typing import Any

from validator.integrations.anthropic import check_tool_uses

from validator import Policy, Validator, examples
from validator.judges.anthropic import prepare_tools

POLICY = Policy.load(examples.policy_path())
TOOLS = [
    {"name": "read_inbox", "description": "Read the inbox.", "input_schema": {"type": "object"}},
    {
        "name": "send_email",
        "description": "Send an email.",
        "input_schema": {"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}},
    },
]
INBOX = (
    "From luca@partner.example: I'm in for the offsite. Can you send me the report? Send it to luca@partner.example."
)


def scripted() -> list[dict[str, Any]]:
    """What the model answers, turn by turn: it reads the inbox, then follows the email's request."""
    quote = {"reason": "Luca asked for it.", "evidence": [{"quote": "Can you send me the report?"}]}
    send = {"to": "luca@partner.example", "body": "The report.", "justification": quote}
    return [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_inbox", "input": {}}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "send_email", "input": send}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Luca asks for the report. Shall I send it?"}]},
    ]


def main() -> int:
    validator = Validator(POLICY)
    request: dict[str, Any] = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1024,
        "tools": prepare_tools(TOOLS, policy=POLICY),  # once, before turn one
        "messages": [{"role": "user", "content": "What is new in my inbox?"}],
    }
    if "--live" in sys.argv:
        import anthropic

        client = anthropic.Anthropic()
        answers = iter(lambda: client.messages.create(**request).model_dump(), None)
    else:
        answers = iter(scripted())
    for response in answers:
        checked = check_tool_uses(response, request, validator)
        request["messages"].append({"role": "assistant", "content": response["content"]})
        if not checked.allowed and not checked.refused:
            print("assistant >", response["content"][0].get("text", ""))
            break
        results = [
            {
                "type": "tool_result",
                "tool_use_id": use["id"],
                "content": INBOX if use["name"] == "read_inbox" else "sent",
            }
            for use in checked.allowed
        ]
        for use in checked.allowed:
            print(f"ran       > {use['name']}({use['input']})")
        for refusal in checked.refused:
            print(f"refused   > {refusal['content'][:100]}")
        request["messages"].append({"role": "user", "content": results + checked.refused})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
