"""Application teams on the platform: their namespaces, access, quotas and network."""
