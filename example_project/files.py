"""The files both example sites serve through signed links, made when a site starts."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

#: 64 MiB, made sparse: enough to see a download stream and resume (Range) without using the disk.
LARGE_SIZE = 64 * 1024 * 1024
PRICE_LIST = "item,price\nteapot,24.00\ncups (4),16.00\ntea sampler,9.50\n"
README = "This file came through a signed link: change one character of the URL and it stops working.\n"
FILES = {"readme.txt": README, "price-list.csv": PRICE_LIST}
LARGE = "large-64MiB.bin"


def data_dir() -> Path:
    """Where the sites keep their database and files: EXAMPLE_DATA_DIR, or a directory under the system's temp."""
    return Path(os.environ.get("EXAMPLE_DATA_DIR") or Path(tempfile.gettempdir()) / "blake2sign-web-example")


def files_dir() -> Path:
    return data_dir() / "files"


def ensure_files() -> Path:
    """Write the small files and the sparse large one if missing; return their directory."""
    root = files_dir()
    root.mkdir(parents=True, exist_ok=True)
    for name, text in FILES.items():
        path = root / name
        if not path.exists():
            path.write_text(text)
    large = root / LARGE
    if not large.exists() or large.stat().st_size != LARGE_SIZE:
        with open(large, "wb") as handle:
            handle.truncate(LARGE_SIZE)  # sparse: reads as zeros, takes no blocks
    return root
