from django.urls import path

from . import views

app_name = "reviews"

# Mounted at "" by config/urls.py, beside the replay page they belong to.
urlpatterns = [
    path("t/<str:code>/matches/<int:number>/review/", views.ask, name="ask"),
    path("t/<str:code>/matches/<int:number>/review.json", views.status, name="status"),
    path("training/", views.exercises, name="exercises"),
    path("training/<int:pk>/", views.exercise, name="exercise"),
]
