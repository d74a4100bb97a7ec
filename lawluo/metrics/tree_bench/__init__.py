"""The tree benchmark (``python -m lawluo bench tolc``): does clarifying with the Tree of Legal
Clarifications make the answer better? Cases from real multi-turn consultations (:mod:`.cases`), a
simulated client answering from hidden facts (:mod:`.simulated`), the judge's two questions (:mod:`.judge`:
which key facts were recovered; which answer is better, in both orders) and the run (:mod:`.bench`).

It sits under ``lawluo.metrics`` (it measures; the clarification tree it measures is ``lawluo.tolc``).
"""
