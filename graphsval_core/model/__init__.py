"""The reference model, its predictions and the regime classifier."""
