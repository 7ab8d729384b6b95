from django.urls import path

from . import views

app_name = "tournaments"

urlpatterns = [
    path("", views.tournament_list, name="list"),
    path("new/", views.create, name="create"),
    path("<int:tournament_id>/", views.detail, name="detail"),
    path("<int:tournament_id>/live/", views.live, name="live"),
    path("<int:tournament_id>/register/", views.register, name="register"),
    path("<int:tournament_id>/withdraw/", views.withdraw, name="withdraw"),
    path("<int:tournament_id>/invitations/<int:invitation_id>/accept/", views.accept_partner,
         name="accept_partner"),
    path("<int:tournament_id>/invitations/<int:invitation_id>/decline/", views.decline_partner,
         name="decline_partner"),
    path("<int:tournament_id>/cancel/", views.cancel, name="cancel"),
]
