x = b"\x1"
