"""The vendor-process boundary: the child process in which every call into a vendor's code runs
(``process``, ``launch``, ``bootstrap``), one task's envelope (``envelope``),
the tasks and their one list (``core_tasks``, ``capability_tasks``, ``task_registry``), what crosses
the boundary besides plain data (``records``), the descriptor as plain data for the process that
judges (``remote_descriptor``) and what to say of a module a vendor's code cannot import
(``import_hints``). It may import ``conformance.outcomes``, ``conformance.descriptor`` and
``conformance.judge``, nothing else of the suite: the checks, the run, inspection and certification
sit above it."""
