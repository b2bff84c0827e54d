"""validators stages of abstaingen."""
