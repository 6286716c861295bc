"""Matching patterns a repository or the model controls, in linear time: globs and regular expressions."""
