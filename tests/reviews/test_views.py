"""The review's addresses (apps.reviews.views) and its part of the replay page: only the people
who played the match ask for it and read it (404 for anyone else, as a private replay), POST
needs the CSRF token, the status JSON's shape, and the page's part for players only."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from apps.reviews import tasks
from apps.reviews.models import MatchReview
from apps.tables import services as tables

from .conftest import finish


def urls(table, match) -> tuple[str, str, str]:
    base = f"/t/{table.code}/matches/{match.number}"
    return f"{base}/review/", f"{base}/review.json", f"{base}/replay/"


def test_only_players_reach_the_review(client, finished, people, sent):
    table, match = finished
    ask, status, _replay = urls(table, match)
    assert client.get(status).status_code == 404  # signed out
    assert client.post(ask).status_code == 404
    client.force_login(people["outsider"])
    assert client.get(status).status_code == 404
    assert client.post(ask).status_code == 404
    assert not MatchReview.objects.exists() and sent == []
    client.force_login(people["ana"])
    assert client.get(status).json() == {"ok": True, "status": "none", "done": 0, "total": 0,
                                         "message": "", "retry": False}
    assert client.get(f"/t/{table.code}/matches/9/review.json").status_code == 404
    assert client.get("/t/NOPE42/matches/1/review.json").status_code == 404
    assert client.get(ask).status_code == 405  # asking is a POST


def test_a_public_matchs_watchers_replay_it_but_see_no_review(client, people, sent):
    table = tables.create_table(host=people["host"], preset="draw", players=2, public=True,
                                options={"target": 10, "turn_seconds": None})
    tables.join_table(user=people["ana"], table_id=table.pk)
    tables.start_match(user=people["host"], table_id=table.pk)
    match = finish(table, 2)
    ask, status, replay = urls(table, match)
    client.force_login(people["outsider"])
    page = client.get(replay)
    assert page.status_code == 200
    assert 'id="review"' not in page.content.decode()
    assert client.get(status).status_code == 404 and client.post(ask).status_code == 404
    client.force_login(people["host"])
    page = client.get(replay).content.decode()
    assert 'id="review"' in page and 'src="/static/js/review.js"' in page
    assert f'data-status-url="{status}"' in page and f'action="{ask}"' in page


def test_asking_needs_the_csrf_token(finished, people, sent):
    table, match = finished
    ask, _status, replay = urls(table, match)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(people["ana"])
    assert browser.post(ask).status_code == 403
    page = browser.get(replay).content.decode()
    token = re.search(r'id="review-form".*?name="csrfmiddlewaretoken" value="([^"]+)"', page,
                      re.S).group(1)
    assert browser.post(ask, {"csrfmiddlewaretoken": token}).status_code == 200
    assert MatchReview.objects.count() == 1


@pytest.mark.slow
def test_the_status_json_through_a_review(client, finished, people, sent,
                                          django_capture_on_commit_callbacks):
    table, match = finished
    ask, status, _replay = urls(table, match)
    client.force_login(people["ana"])
    with django_capture_on_commit_callbacks(execute=True):
        asked = client.post(ask)
    assert asked.status_code == 200 and asked["Cache-Control"] == "no-store"
    data = asked.json()
    assert data["ok"] and data["status"] == "queued" and data["done"] == 0
    assert data["total"] > 0 and data["message"] and "result" not in data
    review = MatchReview.objects.get()
    assert sent == [(review.pk, 1)]
    MatchReview.objects.update(status="running", done=3)
    data = client.get(status).json()
    assert (data["status"], data["done"]) == ("running", 3)
    assert data["message"] == f"3 of {review.total} moves judged"
    tasks.run_review(review.pk, review.attempt)
    data = client.get(status).json()
    assert data["status"] == "done" and data["done"] == data["total"] == review.total
    result = data["result"]
    assert result == MatchReview.objects.get().result
    move = result["rounds"][0]["moves"][0]
    assert {"index", "seat", "played", "best", "forced", "loss", "stderr", "sure", "mark",
            "expected", "expected_for", "reasons"} <= set(move)
    words = data["words"]
    assert set(words["summary"]) == {str(k) for k in range(len(result["rounds"]))}
    for k, rnd in enumerate(result["rounds"]):
        assert set(words["summary"][str(k)]) == {"0", "1"}
        assert all(words["summary"][str(k)][seat] for seat in ("0", "1"))
        for m in rnd["moves"]:
            key = f"{k}:{m['index']}"
            assert (key in words["moves"]) == bool(m["mark"])
            assert len(words["moves"].get(key, [])) == max(len(m["reasons"]), bool(m["mark"]))
    # host played it too: the same review, at no cost, without a new task.
    client.force_login(people["host"])
    again = client.post(ask).json()
    assert again["status"] == "done" and again["result"] == result
    assert MatchReview.objects.count() == 1 and len(sent) == 1


def test_the_hourly_limit_answers_429_with_its_message(client, people, sent, settings):
    from .conftest import two_player_table

    settings.REVIEWS_PER_HOUR = 1
    first, second = (two_player_table(people["host"], people["ana"]) for _ in range(2))
    one, two = finish(first, 1), finish(second, 2)
    client.force_login(people["ana"])
    assert client.post(urls(first, one)[0]).status_code == 200
    refused = client.post(urls(second, two)[0])
    assert refused.status_code == 429
    data = refused.json()
    assert data == {"ok": False, "code": "rate_limited", "message": data["message"]}
    assert "1 match reviewed an hour" in data["message"]
    assert MatchReview.objects.count() == 1


@pytest.mark.parametrize(("language", "words"), [
    ("es", "jugadas analizadas"), ("pt-br", "jogadas analisadas"), ("en", "moves judged")])
def test_the_review_speaks_the_readers_language(client, finished, people, sent, language,
                                                words):
    table, match = finished
    ask, status, replay = urls(table, match)
    people["ana"].profile.language = language
    people["ana"].profile.save()
    client.force_login(people["ana"])
    client.post(ask)
    MatchReview.objects.update(status="running", done=2)
    assert words in client.get(status).json()["message"]
    page = client.get(replay).content.decode()
    assert {"es": "Analizar mis jugadas", "pt-br": "Analisar minhas jogadas",
            "en": "Review my moves"}[language] in page
