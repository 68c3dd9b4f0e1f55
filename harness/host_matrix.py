"""`python -m harness.host_matrix`: the documented entry point of the host matrix (harness/commands/host_matrix.py)."""

from harness.commands.host_matrix import main

if __name__ == "__main__":
    raise SystemExit(main())
