"""The responder's helpers: the answer written without a responder LLM.

:mod:`.words` says what one finished subtask produced, in a sentence per task type (with
the small pieces of :mod:`.phrasing`);
:mod:`.answer` puts a run's sentences together, says what failed and what to do, and
answers small talk (see :mod:`hugginggpt.nodes.respond` for the stage itself).
"""
