"""``python -m qwen_lsp`` = ``qwen-lsp`` (``serve --stdio`` when no command is given); see ``safe_start.py``."""

import sys

from .safe_start import main

sys.exit(main())
