"""sandboxes stages of abstaingen."""
