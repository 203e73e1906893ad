"""Checkpoint volumes (io2/gp3 sizing, the StorageClass) and local NVMe storage classes."""
