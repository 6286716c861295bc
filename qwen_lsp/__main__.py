"""``python -m qwen_lsp`` = ``qwen-lsp`` (``serve --stdio`` when no command is given)."""

import sys

from .cli import main

sys.exit(main())
