"""``qwen-lsp serve --stdio`` with the example feature added to the feature list (tests/test_feature_list.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from example_feature import FEATURE  # noqa: E402

from qwen_lsp.features.catalog import FEATURES  # noqa: E402
from qwen_lsp.server.handlers import create_server  # noqa: E402

if __name__ == "__main__":
    server = create_server((*FEATURES, FEATURE))
    server.start_io()
    sys.exit(server.exit_code)
