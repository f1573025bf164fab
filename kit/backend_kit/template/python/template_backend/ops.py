"""What the backend claims: operator schema name -> its opcode in the payload
(runtime/backend.cpp has the same table). Add an operator here, in the
runtime's ``run_op`` and in conformance.py's samples."""

OPS = {
    "aten::neg": 1,
    "aten::abs": 2,
}
