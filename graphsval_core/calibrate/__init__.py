"""Fitting the constants no datasheet gives, on calibration rows only."""
