"""qwen-lsp: Qwen Code's context engine as a language server."""

__version__ = "0.1.0"
