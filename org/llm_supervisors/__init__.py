"""The LLM-backed supervisors: code style, design and internaliser.

They run at task boundaries on a hosted model, in a background thread, and feed the
agent through the knowledge store and the directive queue (``org.knowledge``).
See docs/supervisors-llm.md.
"""
