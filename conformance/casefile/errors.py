"""The one error loading a case file raises (CaseFileError, 'file:line: what is wrong'), and
the helpers its messages share."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformance.casefile.model import Case


class CaseFileError(Exception):
    """A malformed case file. str() is 'file:line: message'."""

    def __init__(self, path: str | Path, line: int | None, message: str) -> None:
        self.path, self.line, self.message = str(path), line, message
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


def collect(error: CaseFileError, errors: list[CaseFileError] | None) -> list[Case]:
    """Raise error, or with a list to collect into, append it and go on (with no cases)."""
    if errors is None:
        raise error
    errors.append(error)
    return []


def mib(n: int) -> str:
    return f"{n >> 20} MiB"


#: In a message, a value shown from the file is cut to this many characters.
SHOWN = 200


def short(text: str) -> str:
    return text if len(text) <= SHOWN else text[:SHOWN] + " ..."
