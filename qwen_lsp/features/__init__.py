"""The features a turn is built from, one package each; ``catalog.py`` lists them in turn order."""
