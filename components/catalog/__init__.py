"""The tables the rest reads: AWS regions and their zones, GPU instance types. Pure data and loaders."""
