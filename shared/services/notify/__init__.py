"""One notification port, three channels: the in-app inbox (always, written first), then
push to the user's browsers (Web Push) and phones (FCM)."""
