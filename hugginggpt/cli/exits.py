"""Exit codes and usage errors: what ``hugginggpt --help`` shows and every command
raises, kept apart from :mod:`.common` (which imports the graph's settings and
checkpointers) so that the help imports nothing heavy. :mod:`.common` re-exports them.
"""

from __future__ import annotations

__all__ = ["UsageError", "EXIT_OK", "EXIT_DIFFERENT", "EXIT_USAGE", "EXIT_PARTIAL",
           "EXIT_FAILED", "EXIT_ABORTED", "EXIT_WAITING", "EXIT_INTERRUPTED", "EXIT_CODES",
           "exit_codes_help", "NOT_CONFIGURED_HELP"]

NOT_CONFIGURED_HELP = """\
No LLM is configured (the built-in offline planner only handles requests like its
examples). Configure one of:
  - OpenAI:            export OPENAI_API_KEY=sk-...   (optionally --llm gpt-4o)
  - any OpenAI-compatible server (vLLM, Ollama, TGI, LM Studio):
                       --llm MODEL --llm-base-url http://localhost:11434/v1
                       (or HUGGINGGPT_LLM and HUGGINGGPT_LLM_BASE_URL)
  - another provider:  --llm anthropic:claude-sonnet-4-5 with ANTHROPIC_API_KEY set,
                       or ollama:qwen3:4b, google_genai:..., mistralai:..., groq:...
                       (pip install 'hugginggpt[anthropic]', [ollama], [google], ...)
  - Hugging Face:      --llm hf:meta-llama/Llama-3.1-8B-Instruct with HF_TOKEN set,
                       or --llm hf:https://your-endpoint.endpoints.huggingface.cloud
  - several endpoints, routed by capability and load: --llm-config llms.toml
                       (docs/guides/llms.md, "Several LLMs")
Or check a plan without any LLM: hugginggpt run "..." --dry-run --plan PLAN.json"""
"""What a command that needs an LLM says when none is configured (a run's stages say it
the caller's way: :data:`~hugginggpt.tools.errors.NO_LLM`)."""

EXIT_OK = 0
EXIT_DIFFERENT = 1
"""``replay``: the outcome differs from the recording (also Python's code for an
unexpected error, which prints its traceback)."""
EXIT_USAGE = 2
EXIT_PARTIAL, EXIT_FAILED, EXIT_ABORTED, EXIT_WAITING = 3, 4, 5, 6
EXIT_INTERRUPTED = 130

EXIT_CODES: dict[str, tuple[int, str]] = {
    "completed": (EXIT_OK, "every planned subtask done (or none was needed: answered "
                           "directly)"),
    "partial": (EXIT_PARTIAL, "some subtasks done, the others failed or skipped (see "
                              "results)"),
    "failed": (EXIT_FAILED, "there was a plan, but no subtask was done"),
    "aborted": (EXIT_ABORTED, "nothing could go on: no valid plan, the LLM planner down, "
                              "the plan rejected"),
    "waiting": (EXIT_WAITING, "waiting for an approval: hugginggpt resume --thread ID "
                              "--approve | --reject | --plan"),
    "interrupted": (EXIT_INTERRUPTED, "stopped before its end (Ctrl-C): hugginggpt resume "
                                      "--thread ID"),
}
"""A run's status -> its exit code (``run`` and ``resume``) and what it means."""


def exit_codes_help() -> str:
    """The exit codes, for ``hugginggpt --help``."""
    rows = [f"  {code:>3}  {status:<11}  {meaning}"
            for status, (code, meaning) in EXIT_CODES.items()]
    return "\n".join([
        "exit codes of run and resume (the run's status, as in --json):", *rows,
        f"  {EXIT_USAGE:>3}  usage        bad input (a flag, a file, a thread): nothing ran",
        f"  {EXIT_DIFFERENT:>3}  differs      replay: the outcome differs from the "
        "recording (Python uses 1 for an unexpected error too)",
    ])


class UsageError(Exception):
    """Bad input from the user: printed as is, exit code 2."""
