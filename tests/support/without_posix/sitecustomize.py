"""Removes the POSIX-only parts of the standard library the portability seam must not need."""
import os, sys
for name in ("O_NONBLOCK", "O_NOFOLLOW", "O_PATH", "pread"):
    if hasattr(os, name):
        delattr(os, name)
sys.modules["fcntl"] = None
sys.modules["termios"] = None
