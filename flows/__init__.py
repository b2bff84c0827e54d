"""flows stages of abstaingen."""
