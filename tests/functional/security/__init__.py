"""Attacks over real HTTP: one module per finding, each showing the attack fail."""
