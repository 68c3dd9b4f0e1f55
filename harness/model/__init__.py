"""The case model: what one convolution case is, and how it is read from YAML.

Fields and canonical semantics (case), the pydantic schema and its JSON Schema (schema,
case_schema), validity rules (validity), YAML with line numbers (yamlmap), loading and sweeps
(loader, build), known-issue predicates (predicate), sharding (shard).
Imports nothing of the project's: the bottom stage.
"""
