"""Follow-up suggestions and their speculative execution (docs/followup.md).

A plain core: the suggestion prompt and its parsing (``prompt.py``), the
copy-on-write overlay a speculation writes into (``overlay.py``), the gate
that decides which of its tool calls may run (``gate.py``) and the state of
each suggestion (``state.py``). The forked run itself is the agent's
(``features/followups/speculation.py``); the glue is ``features/followups/glue.py``.
"""
