from django.urls import path

from . import views

app_name = "fairplay"

# Mounted at "fairplay/" by config/urls.py.
urlpatterns = [
    path("t/<str:code>/minimum/", views.minimum, name="minimum"),
    # Staff only (the moderation right to handle reports).
    path("staff/collusion/<int:report_id>/", views.collusion, name="collusion"),
    path("staff/collusion/<int:report_id>/decide/", views.collusion_decide,
         name="collusion_decide"),
]
