"""Unmanaged models over the hand-written schema in ``todos/sql/``.

They exist so Django's admin-free screens, forms and simple lists can read these tables with the
ORM. They never write a todo or an attempt: every lifecycle transition is a statement in
``todos.store``.
"""

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models


class Team(models.Model):
    id = models.UUIDField(primary_key=True)
    slug = models.TextField(unique=True)
    name = models.TextField()
    created_at = models.DateTimeField()

    class Meta:
        managed = False
        db_table = "teams"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class TeamMember(models.Model):
    pk = models.CompositePrimaryKey("team_id", "user_id")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="team_memberships")
    role = models.TextField()
    created_at = models.DateTimeField()

    class Meta:
        managed = False
        db_table = "team_members"


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

    class Meta:
        managed = False
        db_table = "endpoints"

    def __str__(self) -> str:
        return self.slug


class QueuePause(models.Model):
    pk = models.CompositePrimaryKey("team_id", "queue")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="paused_queues")
    queue = models.TextField()
    paused_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+", db_column="paused_by"
    )
    paused_at = models.DateTimeField()
    note = models.TextField(null=True)

    class Meta:
        managed = False
        db_table = "queue_pauses"


class Todo(models.Model):
    id = models.TextField(primary_key=True)
    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="todos")
    queue = models.TextField()
    source = models.TextField(null=True)
    kind = models.TextField(null=True)
    title = models.TextField()
    payload = models.JSONField(null=True)
    idempotency_key = models.TextField(null=True)
    assignee = models.TextField(null=True)
    priority = models.SmallIntegerField()
    state = models.TextField()
    owner = models.TextField(null=True)
    lease_expires_at = models.DateTimeField(null=True)
    attempt = models.IntegerField()
    max_attempts = models.IntegerField()
    attempts_total = models.IntegerField()
    attempts_pruned = models.IntegerField()
    next_retry_at = models.DateTimeField(null=True)
    result = models.JSONField(null=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    claimed_at = models.DateTimeField(null=True)
    completed_at = models.DateTimeField(null=True)

    class Meta:
        managed = False
        db_table = "todos"

    @property
    def dead_letter(self) -> bool:
        return self.state == "failed" and self.next_retry_at is None


class TodoAttempt(models.Model):
    pk = models.CompositePrimaryKey("todo_id", "seq")
    todo = models.ForeignKey(Todo, on_delete=models.CASCADE, related_name="attempts")
    seq = models.IntegerField()
    attempt = models.IntegerField()
    claimer_kind = models.TextField()
    owner = models.TextField()
    claimant = models.TextField(null=True)
    claimed_at = models.DateTimeField()
    last_heartbeat_at = models.DateTimeField(null=True)
    lease_expires_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True)
    outcome = models.TextField(null=True)
    disposition = models.TextField(null=True)
    summary = models.TextField(null=True)
    summary_truncated = models.BooleanField()
    artifact = models.TextField(null=True)

    class Meta:
        managed = False
        db_table = "todo_attempts"


class AuditEntry(models.Model):
    id = models.BigAutoField(primary_key=True)
    at = models.DateTimeField()
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    actor = models.TextField()
    action = models.TextField()
    todo_id = models.TextField(null=True)
    endpoint_id = models.UUIDField(null=True)
    queue = models.TextField(null=True)
    note = models.TextField(null=True)
    detail = models.JSONField(null=True)

    class Meta:
        managed = False
        db_table = "audit_log"
        ordering = ["-at", "-id"]
