"""``subscriptions/listen`` and change notifications: the channel-layer fan-out, the
listener that serves one stream, ``watch()`` for models, ``notify_*`` and a clean end of
open streams at shutdown."""
