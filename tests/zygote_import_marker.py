"""Imported by a test zygote: appends this process's pid to $CONVDIFF_TEST_IMPORT_MARKS (one line per import),
so a test can tell which processes imported it (tests/test_zygote.py, templates forked from templates)."""

import os

with open(os.environ["CONVDIFF_TEST_IMPORT_MARKS"], "a") as marks:
    marks.write(f"{os.getpid()}\n")
