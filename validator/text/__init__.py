"""Text: what every stage reads words with, below the gate, the judges and the ledger.

- :mod:`.search`: normalisation and verbatim search over a transcript.
- :mod:`.entities`: URLs, email addresses, IBANs, account and phone numbers in free text.
- :mod:`.split`: a message split into sentences (quoted spans kept whole).
- :mod:`.lexer`: a sentence's words, as the language pack classes them.
- :mod:`.sentences`: where a user's own words stand (pasted and quoted text told apart).
- :mod:`.times`: a time the user named, compared with a date-time argument.
- :mod:`.paths`: dotted argument paths and their leaves.

Nothing here reads a policy, a store or a judge, nor decides anything: it imports the inputs, the language pack
and the findings' types (a request sentence) only.
"""
