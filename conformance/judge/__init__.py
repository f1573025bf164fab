"""The judging process's isolated start: ``environment`` (the interpreter and environment the
process that judges re-executes itself with, and the vendor's state it hands to the vendor process) and
``start`` (the file that process runs by path, before any start-up code). It imports nothing of
the suite, so everything may import it; ``start`` builds the import path first and then only
hands over to ``conformance.cli``."""
