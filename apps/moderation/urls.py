from django.urls import path

from . import views

app_name = "moderation"

# Mounted at "staff/" by config/urls.py.
urlpatterns = [
    path("", views.live_tables, name="live_tables"),
    path("tables/<int:table_id>/", views.observe, name="observe"),
    path("tables/<int:table_id>/record/", views.record, name="record"),
    path("reports/", views.report_queue, name="reports"),
    path("reports/<int:report_id>/", views.report_detail, name="report"),
    path("users/<int:user_id>/", views.person, name="person"),
    path("act/<str:action>/", views.act, name="act"),
]
