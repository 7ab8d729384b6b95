"""The table socket's constants that more than the sockets need (docs/protocol.md).

Here, below every app, so that the pages, the table services and moderation can name them
without importing the sockets.
"""

#: Frames above this are refused unread: a legitimate message is a few dozen bytes.
MAX_FRAME = 2048
#: Session key (list of table ids) written by the table page: this browser has the code.
KNOWN_TABLES_KEY = "tables_known"

#: Application close codes ("Opening" in docs/protocol.md): the page stops reconnecting.
SIGNED_OUT_CLOSE_CODE = 4401
BANNED_CLOSE_CODE = 4403
NOT_FOUND_CLOSE_CODE = 4404
#: A watcher's socket when the host turns watching off.
WATCHING_OFF_CLOSE_CODE = 4410
