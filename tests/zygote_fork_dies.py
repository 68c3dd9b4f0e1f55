"""Imported by a zygote in tests/test_zygote.py: every child it forks exits at once, as a framework that
cannot survive a fork would."""

import os

os.register_at_fork(after_in_child=lambda: os._exit(3))
