"""llm core: the model endpoint and token accounting.

- ``content``: the history format (Qwen Code Content dicts) and its conversion to Chat Completions messages.
- ``client``: the streaming OpenAI-compatible client and its event types.
- ``errors``: ``LLMError`` with actionable, endpoint-naming messages.
- ``tokens``: token counts with Qwen's BPE (tiktoken), with a bytes/4 fallback.
"""
