"""The responder's helpers: the answer written without a responder LLM.

:mod:`.answer` puts a run's sentences together (each finished subtask in the sentence its
task type's declaration says it in, :mod:`hugginggpt.tools.experts.words`), says what
failed and what to do, and answers small talk (see :mod:`hugginggpt.nodes.respond` for
the stage itself); :mod:`.advice` phrases each fix for who asked.
"""
