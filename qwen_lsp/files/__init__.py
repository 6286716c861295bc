"""Files on disk: bounded reads, atomic writes, text decoding, containment, Qwen Code's locations, watching."""
