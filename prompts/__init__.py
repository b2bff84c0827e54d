"""prompts stages of abstaingen."""
