from django.urls import path

from . import views

app_name = "notifications"

urlpatterns = [
    path("", views.page, name="page"),
    path("read/", views.read_all, name="read_all"),
    path("count/", views.count, name="count"),
    path("<int:notification_id>/open/", views.open_one, name="open"),
    path("choices/", views.choices, name="choices"),
    path("push/", views.push_subscribe, name="push_subscribe"),
    path("push/remove/", views.push_unsubscribe, name="push_unsubscribe"),
    path("unsubscribe/<str:token>/", views.unsubscribe, name="unsubscribe"),
]
