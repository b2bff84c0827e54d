"""abstaingen: verified, paired benchmark data for agent abstention."""

__version__ = "0.1.0"
