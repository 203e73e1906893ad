"""The name application teams import (contract 1.0): `from components.platform_reference import PlatformReference`."""

from components.contract.reference import PlatformReference

__all__ = ["PlatformReference"]
