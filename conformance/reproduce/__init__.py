"""Standalone reproducers of operator cases (``executorch-conformance reproduce REPORT CASE``).

A failing case of a report becomes a directory a backend's engineers can run without this suite: the
case's program exported by ``torch.export`` (``case.pt2``), its inputs (``inputs.pt``), the backend's
partitioners as the descriptor made them (``partitioners.pkl``), and ``reproduce.py``, which imports only
torch, executorch and the backend's own package: it lowers the program with those partitioners, runs it
in ExecuTorch's runtime, compares with eager PyTorch within the case's tolerance, prints what differs and
exits 1 while the defect is there (0 once it is fixed, 2 when it cannot run at all).

- ``reproduce_tasks``: the vendor-process task that makes the files (the descriptor's code runs there).
- ``script``: the text of ``reproduce.py``.
- ``reproduce_cli``: the command.
"""
