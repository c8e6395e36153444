x = f"{a\\n}"
