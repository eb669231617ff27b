"""The one list of first-party distributions.

It serves two purposes only: precedence in a clash (a first-party plugin keeps
an entry-point name, or a target, op or predictor key, that a plugin of another
distribution uses too), and the inline sweep labels (the targets of
first-party plugins are the ones labelled inline in the shipped sweeps); the
names it holds also tell a user which first-party distributions are not
installed, and which plugin names the scaffold keeps for graphsval. It holds
no hardware knowledge (no key prefixes, no target lists).
"""

from __future__ import annotations

#: The core's own distribution; its built-in plugins are first-party.
CORE_DISTRIBUTION = "graphsval"

#: Every first-party distribution: the core and the five hardware plugins.
FIRST_PARTY_DISTRIBUTIONS: frozenset[str] = frozenset(
    {
        CORE_DISTRIBUTION,
        "graphsval-cpu",
        "graphsval-cuda",
        "graphsval-jetson",
        "graphsval-kpu",
        "graphsval-tpu",
    }
)


def is_first_party(distribution: str | None) -> bool:
    """Whether a plugin of ``distribution`` (None: not from a distribution) is first-party."""
    return distribution in FIRST_PARTY_DISTRIBUTIONS
