"""TLS trust anchors shipped with the runtime package (package data)."""
