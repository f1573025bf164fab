"""A descriptor module whose import does what $HOSTILE_IMPORT says: segv (kills its process), exit0
(os._exit(0)), sysexit (sys.exit(0)), hang. The process that judges never imports it, so each is a
descriptor error naming what happened, within the timeout."""

import ctypes
import os
import signal
import sys
import time

from broken_backends.descriptors import NO_NAMED_DATA

how = os.environ.get("HOSTILE_IMPORT", "")
if how == "segv":
    ctypes.string_at(0)  # a real invalid read
elif how == "sigterm-self":
    os.kill(os.getpid(), signal.SIGTERM)
elif how == "exit0":
    os._exit(0)
elif how == "sysexit":
    sys.exit(0)
elif how == "hang":
    while True:
        time.sleep(3600)
DESCRIPTOR = NO_NAMED_DATA
