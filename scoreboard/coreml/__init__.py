"""Core ML, ahead of time only: ExecuTorch's Core ML delegate lowered on Linux (scoreboard/coreml/descriptor.py)."""
