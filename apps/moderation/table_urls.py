from django.urls import path

from . import table_views

app_name = "table_chat"

# Mounted at "" by config/urls.py, beside the tables' own /t/<code>/ pages.
urlpatterns = [
    path("t/<str:code>/phrases/", table_views.watcher_phrases, name="watcher_phrases"),
]
