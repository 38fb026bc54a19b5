"""Closed vocabularies of the contracts, as plain tuples: command-line parsers offer them as
choices without building the pydantic models."""

#: the knowledge store's categories: one folder each
CATEGORIES: tuple[str, ...] = ("conventions", "design", "lessons", "domain")
#: the LLM-backed supervisors, in the order they run when several are due at once
SUPERVISOR_NAMES: tuple[str, ...] = ("code_style", "design", "internaliser")
