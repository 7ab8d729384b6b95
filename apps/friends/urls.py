from django.urls import path

from . import views

app_name = "friends"

# Mounted at "friends/" by config/urls.py.
urlpatterns = [
    path("", views.page, name="page"),
    path("add/", views.add, name="add"),
    path("partner/", views.partner, name="partner"),
    path("requests/<int:request_id>/accept/", views.accept, name="accept"),
    path("requests/<int:request_id>/decline/", views.decline, name="decline"),
    path("requests/<int:request_id>/cancel/", views.cancel, name="cancel"),
    path("people/<int:user_id>/remove/", views.remove, name="remove"),
    path("people/<int:user_id>/block/", views.block, name="block"),
    path("people/<int:user_id>/unblock/", views.unblock, name="unblock"),
]
