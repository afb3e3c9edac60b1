"""The Board's routes, sign-in, ``/healthz`` and ``/metrics`` (the agent API is mounted in board/urls.py).

Every todo action of ``todos/dashboard/views/action_table.py`` is its own named route
(``todo_<action>``) so each is listed, tested for isolation (tests/board/test_isolation.py fails for
a route it does not cover), and easy to find.
"""

from django.contrib.auth import views as auth_views
from django.urls import path, register_converter

from todos.dashboard.route_converters import RowId, Segment
from todos.dashboard.views import (
    action_table,
    actions,
    activity,
    agents,
    bulk,
    charts,
    downstream,
    endpoints,
    health,
    metrics,
    overview,
    people,
    preferences,
    saved_views,
    schedules,
    sign_in,
    sign_in_roles,
    teams,
    todo_export,
    todos,
)

# An id route matches any segment: a malformed id gets the Board's own 404 from its view.
register_converter(Segment, "segment")
register_converter(RowId, "row_id")

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("metrics", metrics.metrics, name="metrics"),
    # sign-in (Django's views with single sign-on beside them, the Board's templates; docs/sign-in.md)
    path("accounts/login/", sign_in.LoginView.as_view(), name="login"),
    path("accounts/logout/", sign_in.sign_out, name="logout"),
    path("accounts/password_change/", sign_in.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password_change/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    # overview, agents, activity
    path("", overview.overview_page, name="overview"),
    path("overview/table/", overview.overview_table, name="overview_table"),
    path("queues/pause/", actions.queue_pause, name="queue_pause"),
    path("queues/resume/", actions.queue_resume, name="queue_resume"),
    path("concurrency/limit/", actions.concurrency_limit, name="concurrency_limit"),
    path("queues/timeout/", actions.queue_timeout, name="queue_timeout"),
    path("rate/limit/", actions.rate_limit, name="rate_limit"),
    path("agents/", agents.agents_page, name="agents"),
    path("agents/panel/", agents.agents_panel, name="agents_panel"),
    path("agents/<slug:slug>/pause/", agents.agent_pause, name="agent_pause"),
    path("agents/<slug:slug>/resume/", agents.agent_resume, name="agent_resume"),
    path("agents/<slug:slug>/revoke/", agents.agent_revoke, name="agent_revoke"),
    path("activity/", activity.activity_page, name="activity"),
    path("charts/", charts.charts_page, name="charts"),
    path("charts/panel/", charts.charts_panel, name="charts_panel"),
    path("overview/chart/", charts.overview_chart, name="overview_chart"),
    # todos
    path("todos/", todos.todo_list, name="todo_list"),
    path("todos/counts/", todos.todo_counts, name="todo_counts"),
    path("todos/new/", actions.todo_new, name="todo_new"),
    path("todos/dead-letters/", bulk.dead_letter_groups, name="dead_letter_groups"),
    path("todos/bulk/preview/", bulk.bulk_preview, name="bulk_preview"),
    path("todos/bulk/", bulk.bulk_start, name="bulk_start"),
    path("todos/bulk/<str:job_id>/", bulk.bulk_job, name="bulk_job"),
    path("todos/bulk/<str:job_id>/stop/", bulk.bulk_stop, name="bulk_stop"),
    path("todos/export.csv", todo_export.todo_export, name="todo_export"),
    path("todos/views/", saved_views.saved_views, name="saved_views"),
    path("todos/views/<int:view_id>/rename/", saved_views.saved_view_rename, name="saved_view_rename"),
    path("todos/views/<int:view_id>/delete/", saved_views.saved_view_delete, name="saved_view_delete"),
    path("todos/<str:todo_id>/", todos.todo_detail, name="todo_detail"),
    path("todos/<str:todo_id>/drawer/", todos.todo_drawer, name="todo_drawer"),
    path("todos/<str:todo_id>/row/", todos.todo_row, name="todo_row"),
    path("todos/<str:todo_id>/cancel-downstream/", downstream.todo_cancel_downstream, name="todo_cancel_downstream"),
    *[
        path(f"todos/<str:todo_id>/{action.path}/", actions.todo_action(action), name=action.url_name)
        for action in action_table.TABLE
    ],
    # periodic schedules
    path("schedules/", schedules.schedule_list, name="schedules"),
    path("schedules/panel/", schedules.schedule_panel, name="schedules_panel"),
    path("schedules/new/", schedules.schedule_create, name="schedule_create"),
    path("schedules/preview/", schedules.schedule_preview, name="schedule_preview"),
    path("schedules/<str:schedule_id>/", schedules.schedule_detail, name="schedule_detail"),
    path("schedules/<str:schedule_id>/pause/", schedules.schedule_pause, name="schedule_pause"),
    path("schedules/<str:schedule_id>/resume/", schedules.schedule_resume, name="schedule_resume"),
    path("schedules/<str:schedule_id>/fire/", schedules.schedule_fire, name="schedule_fire"),
    path("schedules/<str:schedule_id>/delete/", schedules.schedule_delete, name="schedule_delete"),
    # teams
    path("teams/", teams.team_list, name="teams"),
    path("teams/new/", teams.team_create, name="team_create"),
    path("teams/<segment:slug>/", teams.team_detail, name="team_detail"),
    path("teams/<segment:slug>/members/", teams.team_member_set, name="team_member_set"),
    path("teams/<segment:slug>/members/<row_id:user_id>/remove/", teams.team_member_remove, name="team_member_remove"),
    # the person's own settings (the header's zone switch)
    path("me/time-zone/", preferences.set_time_zone, name="time_zone"),
    # people (site admins)
    path("people/", people.people_page, name="people"),
    path("people/new/", people.person_create, name="person_create"),
    path("people/<row_id:user_id>/deactivate/", people.person_deactivate, name="person_deactivate"),
    path("people/<row_id:user_id>/reactivate/", people.person_reactivate, name="person_reactivate"),
    path("people/<row_id:user_id>/password/", people.person_password_reset, name="person_password_reset"),
    path("people/sign-in-roles/", sign_in_roles.sign_in_roles, name="sign_in_roles"),
    path("people/sign-in-roles/new/", sign_in_roles.sign_in_role_add, name="sign_in_role_add"),
    path(
        "people/sign-in-roles/<row_id:mapping_id>/remove/",
        sign_in_roles.sign_in_role_remove,
        name="sign_in_role_remove",
    ),
    # endpoints (agent credentials)
    path("endpoints/", endpoints.endpoint_list, name="endpoints"),
    path("endpoints/panel/", endpoints.endpoint_panel, name="endpoints_panel"),
    path("endpoints/new/", endpoints.endpoint_vend, name="endpoint_vend"),
    path("endpoints/<segment:slug>/edit/", endpoints.endpoint_edit, name="endpoint_edit"),
    path("endpoints/<segment:slug>/rotate/", endpoints.endpoint_rotate, name="endpoint_rotate"),
    path("endpoints/<segment:slug>/revoke/", endpoints.endpoint_revoke, name="endpoint_revoke"),
    path("endpoints/<segment:slug>/delete/", endpoints.endpoint_delete, name="endpoint_delete"),
]
