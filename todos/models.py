"""Unmanaged models over the hand-written schema in ``todos/sql/``.

Only the two the management commands look up by slug remain (``vend --team``, ``revoke``): every
other read is a selector's SQL and every write a store statement, so a model nobody reads would
only be a second, unchecked description of the schema.
"""

from typing import ClassVar

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models


class Team(models.Model):
    id = models.UUIDField(primary_key=True)
    slug = models.TextField(unique=True)
    name = models.TextField()
    created_at = models.DateTimeField()

    objects: ClassVar[models.Manager]  # Django's metaclass adds it; said here for the type checker

    class Meta:
        managed = False
        db_table = "teams"
        ordering = ["name"]

    def __str__(self) -> str:
        return str(self.name)  # a str on an instance; the type checker sees the TextField


class Endpoint(models.Model):
    id = models.UUIDField(primary_key=True)
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="endpoints")
    slug = models.TextField(unique=True)
    name = models.TextField()
    credential_hash = models.BinaryField()
    credential_prefix = models.TextField()
    scope_verbs = ArrayField(models.TextField())
    scope_queues = ArrayField(models.TextField())
    default_lease_ttl_seconds = models.IntegerField(null=True)
    state = models.TextField()
    created_at = models.DateTimeField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+", db_column="created_by"
    )
    revoked_at = models.DateTimeField(null=True)
    expires_at = models.DateTimeField(null=True)
    last_seen_at = models.DateTimeField(null=True)
    claims_paused_at = models.DateTimeField(null=True)
    claims_paused_by = models.TextField(null=True)

    objects: ClassVar[models.Manager]  # Django's metaclass adds it; said here for the type checker

    class Meta:
        managed = False
        db_table = "endpoints"

    def __str__(self) -> str:
        return str(self.slug)  # a str on an instance; the type checker sees the TextField
