"""Package metadata a user's pip and an auditor read: SPDX licence, licence file, classifiers."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_license_is_an_spdx_expression_with_its_file():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    meta = project["project"]
    assert meta["license"] == "Apache-2.0"  # a string, not the deprecated TOML table
    for name in meta["license-files"]:
        text = (ROOT / name).read_text()
        assert "Apache License" in text and "Version 2.0" in text and "END OF TERMS AND CONDITIONS" in text
    # SPDX strings need setuptools >= 77; older ones would reject or warn about the metadata.
    assert "setuptools>=77" in project["build-system"]["requires"]
    assert not any(c.startswith("License ::") for c in meta["classifiers"])  # PEP 639: no licence classifiers beside SPDX
    assert meta["urls"] and "Programming Language :: Python :: 3.11" in meta["classifiers"]
