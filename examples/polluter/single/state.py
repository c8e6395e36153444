"""The module global the single demo's polluter leaks."""
LOCALE = "en"
