"""Doors through which frameworks reach dash (see the README's integration table)."""
