"""The name teams of contract 1.0 imported; new programs import `seedance_client.reference` (the
`seedance-infra-client` distribution, without the platform)."""

from seedance_client.reference import PlatformReference

__all__ = ["PlatformReference"]
