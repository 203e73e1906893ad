"""The price model and its sources: the bundled snapshot, live AWS reads, EBS and Reserved Instance rates."""
