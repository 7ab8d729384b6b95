from django.urls import path

from . import views

app_name = "fairplay"

# Mounted at "fairplay/" by config/urls.py.
urlpatterns = [
    path("t/<str:code>/minimum/", views.minimum, name="minimum"),
]
