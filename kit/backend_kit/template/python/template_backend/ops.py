"""What the backend claims: operator schema name -> its opcode in the payload.
The runtime's ``enum Op`` is generated from this table (``aten::neg`` ->
``kAtenNeg``, backend_identity.h); add an operator here and a case for it in
the runtime's ``run_op``. tests/test_template_backend.py runs every operator
of this table through the runtime."""

OPS = {
    "aten::neg": 1,
    "aten::abs": 2,
}
