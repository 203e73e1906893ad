"""The platform contract application teams read, and the StackReference that reads it."""
