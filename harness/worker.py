"""`python -m harness.worker BACKEND DEVICE READ_FD WRITE_FD`: the documented worker entry point.

The worker itself lives in harness/execution/worker.py; this name stays for scripts that start one.
"""

import sys

from harness.execution.worker import main

if __name__ == "__main__":
    main(sys.argv[1:])
