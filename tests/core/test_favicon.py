"""/favicon.ico answers (browsers ask for it on a first visit, before any page names an icon)."""

from __future__ import annotations


def test_favicon_is_an_icon(client, db):
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    body = response.content
    assert body[:4] == b"\x00\x00\x01\x00" and b"PNG" in body[:40]


def test_pages_name_the_svg_icon(client, db):
    html = client.get("/").content.decode()
    assert 'rel="icon"' in html and "favicon.svg" in html
