"""generators stages of abstaingen."""
