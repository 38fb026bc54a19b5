"""The environment variables that link an Agent-Zero unit to a shared volume.

Kept apart from ``volume`` (which builds on the contracts) so that every command's parser and
``doctor`` can name them without loading the macrocosm.
"""

ENV_VOLUME = "A0ORG_VOLUME"
ENV_UNIT = "A0ORG_UNIT"
