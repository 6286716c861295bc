"""Text as Qwen Code sees it: JavaScript whitespace and length, localeCompare ordering, YAML frontmatter."""
