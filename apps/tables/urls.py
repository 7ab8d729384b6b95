from django.urls import path

from . import games_views, views

app_name = "tables"

# Mounted at "" by config/urls.py; the home page keeps the project-wide name "home".
urlpatterns = [
    path("lobby/", views.lobby, name="lobby"),
    path("tables/new/", views.create, name="create"),
    path("play/", views.quick_play, name="quick_play"),
    path("games/", games_views.games, name="games"),
    path("games/next/", games_views.next_game_page, name="next_game"),
    path("games/next.json", games_views.next_game_json, name="next_game_json"),
    path("games/vacation/", games_views.vacation, name="vacation"),
    path("t/<str:code>/resume/", games_views.resume, name="resume"),
    path("practice/", views.practice, name="practice"),
    path("t/<str:code>/", views.table_page, name="table"),
    path("t/<str:code>/join/", views.join, name="join"),
    path("t/<str:code>/leave/", views.leave, name="leave"),
    path("t/<str:code>/invite/", views.invite, name="invite"),
    path("t/<str:code>/name/", views.rename, name="rename"),
    path("t/<str:code>/preferences/", views.preferences, name="preferences"),
    path("t/<str:code>/record.json", views.record, name="record"),
    path("t/<str:code>/watching/", views.watching, name="watching"),
    path("t/<str:code>/matches/<int:number>/replay/", views.replay, name="replay"),
]
