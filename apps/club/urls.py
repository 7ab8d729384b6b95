from django.urls import path

from . import views

app_name = "club"

urlpatterns = [
    path("daily/", views.daily, name="daily"),
    path("stakes/", views.stakes, name="stakes"),
    path("stakes/<str:code>/stand-up/", views.stand_up, name="stand_up"),
    path("leaderboards/", views.leaderboards, name="leaderboards"),
    path("league/", views.league, name="league"),
]
