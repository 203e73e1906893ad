"""What an application team needs from a seedance platform, without the platform's program: the typed,
versioned contract a platform stack exports (`contract`), the reader for a Pulumi program
(`reference.PlatformReference`), and the helpers that publish a model version to a served set
(`publishing`). Installed on its own as the `seedance-infra-client` distribution (seedance_client/pyproject.toml), with
the `seedance model` command (`models`).
"""
