"""The LLM client: which endpoints a run may call (``config``), how calls are spread
over them (``router``), the call itself (``client.complete``), what is kept of every
call (``records``), reading replies (``replies``), replaying a recorded run
(``replay``) and which failures are the endpoint's (``errors``)."""
