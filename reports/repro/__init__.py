"""Standalone reproducer scripts: the script around a case (script.py), one template per framework family,
registered by exact backend name (registry.py), and what each verdict line prints (verdict.py)."""
