"""The reference model's physical terms, one function per term, each numpy over
a batch of shapes: traffic per tier (:mod:`.traffic`), what the inner levels
keep (:mod:`.residency`), memory time (:mod:`.memory`), compute in waves of
register tiles (:mod:`.compute`), launch, first touch and packing
(:mod:`.overheads`), overlap and regime (:mod:`.latency`), and energy
(:mod:`.energy`). :mod:`graphsval_core.model.reference` composes them."""
