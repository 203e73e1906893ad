"""`seedance model`: the client's model verbs (seedance_client/models.py), so the platform's command and a
team's client command are one piece of code."""

from seedance_client.models import register

__all__ = ["register"]
