"""The scoreboard: the conformance suite run on backends nobody in this repository wrote.

One descriptor package per real backend (``scoreboard.xnnpack``, ``scoreboard.openvino``), the
committed results of full runs (``scoreboard/results/``), the renderer of the scoreboard
(``python -m scoreboard.render``), the triage of every failure (``scoreboard/triage.json``) and
standalone reproducers of the backends' own defects (``scoreboard/reproducers/``). See
scoreboard/README.md.
"""
