"""The Board's words for the codes the store records: attempt outcomes and dispositions, audit
actions. People read the sentence; the code stays beside it as secondary text (it is what the API,
the logs and the activity filter say), so both are one glance apart.

A code with no entry here is shown as itself: a new code is never hidden, only not yet worded.
"""

from __future__ import annotations

# How an attempt ended (todo_attempts.outcome), as "<this> → <disposition>".
OUTCOMES = {
    "completed": "Completed",
    "failed": "Failed: the worker reported an error",
    "released": "Released by its holder",
    "lease_expired": "Died: its lease lapsed and a new claim took the todo over",
    "reaped": "Died: its lease lapsed and the reaper took the todo back",
    "canceled": "Canceled while it ran",
    "revoked": "Ended: its endpoint was revoked",
    "timed_out": "Timed out: the worker was still heartbeating",
}
# A dead letter's reason, as a screen reader hears it, by how its last attempt ended: the worker
# reported a failure, the attempt died (its lease lapsed) or ran past its run-time limit, or no
# attempt ran at all.
DEAD_REASON_LABELS = {
    "failed": "Failed:",
    "lease_expired": "Died:",
    "reaped": "Died:",
    "revoked": "Ended:",
    "timed_out": "Timed out:",
}
# A force release closes the attempt as ``released`` with ``ended_by`` set (0009).
FORCED = "Force-released by {who}: the lease was taken away"

# What became of the todo when the attempt ended (todo_attempts.disposition).
DISPOSITIONS = {
    "done": "it is done",
    "retry_scheduled": "a retry is scheduled",
    "requeued": "it went back to pending",
    "dead_lettered": "it became a dead letter",
    "canceled": "it was canceled",
}

# Audit actions (audit_log.action): what the person did, as a sentence's predicate.
ACTIONS = {
    "todo.create": "created a todo",
    "todo.claim": "claimed it",
    "todo.extend": "extended the lease",
    "todo.release": "released it",
    "todo.force_release": "took the lease away (force release)",
    "todo.complete": "completed it",
    "todo.fail": "failed it",
    "todo.retry": "sent it back to pending (retry)",
    "todo.cancel": "canceled it",
    "todo.assign": "assigned it",
    "todo.unassign": "removed its assignee",
    "todo.priority": "changed its priority",
    "todo.run_now": "made it claimable now (run now)",
    "todo.run_anyway": "ran it without waiting for its parents (run anyway)",
    "todo.reschedule": "rescheduled it",
    "todo.edit": "edited it",
    "queue.pause": "paused the queue",
    "queue.resume": "resumed the queue",
    "endpoint.vend": "vended an endpoint",
    "endpoint.rotate": "rotated an endpoint's token",
    "endpoint.scopes": "changed an endpoint's scopes",
    "endpoint.lease": "changed an endpoint's default lease",
    "endpoint.revoke": "revoked an endpoint",
    "endpoint.pause": "paused an endpoint's claims",
    "endpoint.resume": "resumed an endpoint's claims",
    "endpoint.expire": "an endpoint's lifetime ended (revoked)",
    "endpoint.delete": "deleted a revoked endpoint",
    "endpoint.capabilities": "changed an endpoint's default capabilities",
    "concurrency.limit": "set a concurrency key's limit",
    "queue.timeout": "set the queue's default run-time limit",
    "rate.limit": "set a rate key's limit",
    "rate.remove": "removed a rate key's limit",
    "team.create": "created a team",
    "member.set": "added a member or changed a role",
    "member.remove": "removed a member",
    "person.create": "created a person",
    "person.deactivate": "deactivated a person",
    "person.reactivate": "reactivated a person",
    "person.password_reset": "reset a person's password",
    "sign_in.mapping_add": "mapped a provider group to a team role",
    "sign_in.mapping_remove": "removed a provider group's team role",
    "schedule.create": "created a schedule",
    "schedule.edit": "edited a schedule",
    "schedule.pause": "paused a schedule",
    "schedule.resume": "resumed a schedule",
    "schedule.fire": "fired a schedule now",
    "schedule.delete": "deleted a schedule",
}


# A timed-out attempt, when how long it ran is known.
TIMED_OUT_AFTER = "Timed out after {ran}: the worker was still heartbeating"


def outcome(
    code: str | None, disposition: str | None = None, *, forced_by: str | None = None, ran: str | None = None
) -> str:
    """An ended attempt in words: "Died: its lease lapsed … — it went back to pending". ``ran``
    (a duration in words) says how long a timed-out attempt ran."""
    if forced_by:
        head = FORCED.format(who=forced_by)
    elif code == "timed_out" and ran:
        head = TIMED_OUT_AFTER.format(ran=ran)
    else:
        head = OUTCOMES.get(code or "", code or "")
    if not disposition:
        return head
    return f"{head}; {DISPOSITIONS.get(disposition, disposition)}"


def action(code: str) -> str:
    """An audit action in words (the code itself when it has none yet)."""
    return ACTIONS.get(code, code)


def dead_reason_label(outcome: str | None) -> str:
    """ "Failed:" when the worker reported the failure, "Died:" when the attempt died, else "Ended:"."""
    return DEAD_REASON_LABELS.get(outcome or "", "Ended:")
