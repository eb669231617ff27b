"""Fitting the constants no datasheet gives, on calibration rows only.

:mod:`.inputs` reads the rows and refuses validation data, :mod:`.rows` runs
the model over them, :mod:`.params` chooses the latency constants the rows
exercise, :mod:`.fit` fits them and :mod:`.energy` the energy coefficients,
:mod:`.evaluate` measures how well the fit predicts (in sample and
leave-one-out), :mod:`.file` builds the calibration file's content and
:mod:`.plots` draws the fit; :mod:`.workflow` runs them in order for
``graphsval calibrate``.
"""
