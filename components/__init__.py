"""Reusable ComponentResources and the pure logic they use, one package per domain."""
