"""Signed links, framework-neutral: signing and verifying them, and what a request by one gets.

It owns ``URLSigner`` (``signer``) and the text its MAC covers with the link's times (``text``), folder links
(``folders``), grant cookies (``grants``), groups (``groups``), HLS playlists (``playlists``), the link options
(``options``), what a request is verified as (``targets``), its decisions (``requests``) and their order at one
endpoint (``guard``), serving a file (``files``, ``stored_files``) and a single-use link's confirmation page
(``confirmation``). It may import ``stores`` and ``signing``, never ``sessions``; the adapters use it.
"""
