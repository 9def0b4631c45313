"""The engine's store-backed steps, each over one store protocol, and the one module that builds their keys.

- :mod:`~validator.state.lookup`: the standing authorizations a call cites, and the user's own that cover it;
- :mod:`~validator.state.retrycap`: the same action blocked again and again stops costing judge calls;
- :mod:`~validator.state.reuse`: the same action on the same conversation is judged once;
- :mod:`~validator.state.ledger`: one request of the user's authorizes one dangerous action;
- :mod:`~validator.state.questions`: an ``ask_user`` verdict's question, kept until it is answered once;
- :mod:`~validator.state.keys`: every key these steps read or write, built in one place, so the store's
  read-ahead session and the steps can never disagree on one.

A store that cannot answer never approves: each step says what its failure means.
"""
