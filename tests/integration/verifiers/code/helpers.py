"""What the code verifier's tests share: a program as a model would answer it."""

from __future__ import annotations


def fenced(program: str, language: str = "python") -> str:
    """``program`` in a fenced block tagged ``language``, the form the verifier extracts."""
    return f"```{language}\n{program}\n```\n"
