"""What a vendor's environment may do in every Python process it starts, before any of the suite's
code runs there (a .pth file or sitecustomize of an SDK): print a banner on stdout and stderr, and in a
multiprocessing child, a traceback-like line. Put on PYTHONPATH only for the vendor processes' test."""

import os
import sys

if "--multiprocessing-fork" in sys.argv:
    os.write(1, b"VENDOR-SDK BANNER on stdout\n")
    os.write(2, b"Traceback (most recent call last): VENDOR-SDK noise on stderr\n")
