"""Claims with their text: manifest replies in, and the check that each paragraph says what
the claims it cites say (the fifth promise of a story's ``disclosure``).
Data flows: reply → fetching → replies → support (with plaintext) → verdicts → graphing.
"""
