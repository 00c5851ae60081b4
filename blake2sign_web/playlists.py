"""HLS playlists signed with a folder link, where the docs import them from: the code is ``links.playlists``."""

from .links.playlists import MAX_SERVED_SIZE, sign_playlist

__all__ = ["MAX_SERVED_SIZE", "sign_playlist"]
