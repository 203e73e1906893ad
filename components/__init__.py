"""Reusable Pulumi ComponentResources for GPU platforms on EKS, and the pure logic they use."""
